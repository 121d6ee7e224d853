/**
 * How a whisper reaches the soul's mind: as embodied recall, the soul's own intuition
 * surfacing from deeper memory, never as a directive from outside. That is the Open Souls
 * way for one soul to touch another (assistant-role memory), and it is what keeps a daimon
 * a counsellor rather than a puppeteer: the soul may heed the intuition or not.
 *
 * The soul runtime (or a blueprint's pipeline) reads the whisper from soul memory
 * `daimonicWhisper`, injects it with `withDaimonicIntuition` for exactly one successful turn,
 * and then consumes it. The cognitive pipeline (pipeline/assemblePrompt.ts) shows the same
 * block through `formatIntuition`.
 *
 * Here in the kernel, not in actors/daimon, because the pipeline may not import actors/;
 * actors/daimon re-exports all of it.
 */
import type { InputMemory } from "./Memory.ts";
import { sanitizeWhisper } from "./sanitizeWhisper.ts";
import { safeName } from "./untrustedMemory.ts";
import type { WorkingMemory } from "./WorkingMemory.ts";

/** The soul-memory key the soul runtime keeps the pending whisper under. */
export const DAIMONIC_WHISPER_KEY = "daimonicWhisper";
/** The working-memory region the recalled intuition lives in while it is active. */
export const DAIMONIC_REGION = "daimonicIntuition";

/** A pending whisper, as the soul stores it: what was whispered and which daimon whispered it. */
export interface DaimonicWhisper {
  content: string;
  source: string;
}

/** A whisper to show: its text, and the daimon's name ("The daimon" when empty or absent). */
export interface Whisper {
  content: string;
  source?: string;
}

/** What a daimon is called in the prompt when the whisper does not say. */
const UNNAMED_DAIMON = "The daimon";
/** Names come from the bus (1–256 chars); in the prompt they are one short, plain word or two. */
const NAME_MAX_CHARS = 64;

/** A name from the bus as plain prose (sanitizeWhisper), then as any display name is shown (safeName: no heading marks, no colon). */
function displayName(name: string, fallback: string): string {
  return safeName(sanitizeWhisper(name, { maxChars: NAME_MAX_CHARS }), fallback);
}

function asWhisper(whisper: Whisper | string): Whisper {
  return typeof whisper === "string" ? { content: whisper, source: "" } : whisper;
}

/**
 * The pending whisper in a soul's memory, or undefined when there is none (never set, or
 * consumed: null or an empty string). A bare string is accepted as well, as the reference
 * implementation stores it that way.
 */
export function readDaimonicWhisper(soulMemory: Readonly<Record<string, unknown>>): DaimonicWhisper | undefined {
  const value = soulMemory[DAIMONIC_WHISPER_KEY];
  if (typeof value === "string") return value.trim() ? { content: value, source: "" } : undefined;
  if (value === null || typeof value !== "object") return undefined;
  const { content, source } = value as Partial<Record<keyof DaimonicWhisper, unknown>>;
  if (typeof content !== "string" || content.trim() === "") return undefined;
  return { content, source: typeof source === "string" ? source : "" };
}

/**
 * The prompt block, exactly as the reference pipeline gives it:
 *
 *     ## Daimonic Intuition
 *
 *     Claudius sensed an intuition surface from deeper memory:
 *
 *     ```
 *     Kothar whispers: The user circles back to this question...
 *     ```
 *
 * The text is sanitised again here, whoever stored it, because this is the last point
 * before the prompt; sanitised text has no fence, so it cannot close the one around it.
 */
export function formatDaimonicIntuition(soulName: string, whisper: Whisper | string): string {
  const { content, source = "" } = asWhisper(whisper);
  const soul = displayName(soulName, "The soul");
  const daimon = displayName(source, UNNAMED_DAIMON);
  return `## Daimonic Intuition\n\n${soul} sensed an intuition surface from deeper memory:\n\n\`\`\`\n${daimon} whispers: ${sanitizeWhisper(content)}\n\`\`\``;
}

/**
 * The block as the cognitive pipeline's `intuition` section wants it: "" when nothing of the
 * whisper survives sanitising, so the section is left out rather than showing an empty whisper.
 */
export function formatIntuition(soulName: string, whisper: Whisper | string): string {
  return sanitizeWhisper(asWhisper(whisper).content) ? formatDaimonicIntuition(soulName, whisper) : "";
}

/**
 * The intuition as the soul's own memory: assistant role (its recall, not a system
 * directive and not user input), in the `daimonicIntuition` region.
 */
export function daimonicMemory(soulName: string, whisper: Whisper | string): InputMemory {
  const { source } = asWhisper(whisper);
  return {
    role: "assistant",
    name: soulName,
    region: DAIMONIC_REGION,
    content: formatDaimonicIntuition(soulName, whisper),
    // No undefined values: memories are stored with msgpack, which would keep them as nil.
    metadata: source ? { daimonic: true, source } : { daimonic: true },
  };
}

/**
 * The memory with the intuition as its latest recall (any earlier one replaced), so it sits
 * right before the soul's next step. Use `withoutDaimonicIntuition` before committing if the
 * recall should not stay in the conversation history.
 */
export function withDaimonicIntuition(memory: WorkingMemory, whisper: Whisper | string): WorkingMemory {
  return memory.withoutRegions(DAIMONIC_REGION).withMemory(daimonicMemory(memory.soulName, whisper));
}

/** The memory without any recalled intuition: what a turn should commit once it has used it. */
export function withoutDaimonicIntuition(memory: WorkingMemory): WorkingMemory {
  return memory.withoutRegions(DAIMONIC_REGION);
}
