/**
 * Prompt assembly: the reference's `build_prompt`, section by section, in its order:
 *
 *   (the thread so far: what a resumed session would carry)
 *   1. persona (first turn only)          2. skills manifest (first turn only)
 *   3. soul state (non-default keys)      4. daimonic intuition (a whisper is active)
 *   5. user model (Samantha-Dreams gate)  6. cognitive instructions (this turn's steps)
 *   (split mode: what earlier steps of this turn produced)
 *   7. the user message, fenced and labelled UNTRUSTED INPUT
 *
 * The result says which sections went in and how big each was, so tests can check the order
 * and the gates and the benchmark can count what the gates save.
 *
 * The system prompt holds only the blueprint's and the runtime's own words (persona, skills,
 * instructions) and the soul state's closed keys. Everything that could carry a person's
 * words is fenced and labelled untrusted outside it: the message and the history (user
 * role), the soul state's free-text notes and the user model the soul wrote from what people
 * said (the soul's own voice, assistant role). A whisper is sanitised to one plain line. A
 * display name is one short inert line (`safeName`), quoted where it stands outside a fence.
 * No cognitive tag, fence line or heading of theirs survives in a form the answer's parser,
 * or a model echoing it, could take for structure.
 */
import type { ChatMessage, ChatRole } from "../../providers/index.ts";
import { estimateTokens } from "../../providers/index.ts";
import { blankUserModel } from "./userModelText.ts";
import { formatIntuition, type Whisper } from "../daimonicIntuition.ts";
import { regionOf, DEFAULT_REGION, type Memory } from "../Memory.ts";
import { fenceBlock, fenceUntrusted, neutralizeTags, type CognitiveTag } from "../taggedXml.ts";
import { isUntrustedMemory, quotedName, safeName } from "../untrustedMemory.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import { DEFAULT_PIPELINE_CONFIG, type PipelineConfig } from "./config.ts";
import { planTurn, type TurnPlan } from "./gating.ts";
import { buildCognitiveInstructions } from "./instructions.ts";
import { pipelineMarker } from "./pipelineMemory.ts";
import type { PipelineProcess } from "./processes.ts";
import type { SoulState } from "./soulState.ts";
import { formatSoulNotes, formatSoulState } from "./soulStatePrompt.ts";
import { tagsOf, type PipelineStep } from "./steps.ts";

export type PromptSectionName =
  | "history"
  | "persona"
  | "skills"
  | "soulState"
  | "soulNotes"
  | "intuition"
  | "userModel"
  | "instructions"
  | "earlierSteps"
  | "message";

/** Earlier user messages in the thread are fenced the same way; this one label covers them. */
const CURRENT_MESSAGE_LABEL = "The following is the user's message, like the fenced ones above";

export interface PromptSection {
  name: PromptSectionName;
  /** "mixed" for the history, which keeps each memory's own role. */
  role: ChatRole | "mixed";
  /** Messages the section contributed (history has one per memory). */
  messages: number;
  chars: number;
  /** `estimateTokens` of the section's text: characters / 4, the same rule everywhere. */
  tokens: number;
}

export interface Skill {
  name: string;
  description: string;
}

export interface IncomingMessage {
  text: string;
  /** Who said it, as the prompt names them ("Tom: ..."). */
  userName: string;
}

/** A step of this turn already answered (split mode), chained into the next step's prompt. */
export interface EarlierStep {
  step: PipelineStep;
  content: string;
  verb?: string;
}

/** What the caller brings to a turn's prompt besides the memory and the message. */
export interface PromptInputs {
  /** soul.md: shown on the first turn, then kept in memory as the thread's context. */
  persona?: string;
  skills?: string | readonly Skill[];
  soulState?: Partial<SoulState>;
  /** An active daimonic whisper; the caller consumes it after a successful turn. */
  whisper?: Whisper | string;
  /** The current user model (markdown), shown when the gate opens; a blank blueprint is used when there is none. */
  userModel?: string;
  processes?: Readonly<Record<string, PipelineProcess>>;
}

export interface AssembleInput extends PromptInputs {
  memory: WorkingMemory;
  message: IncomingMessage;
  config?: PipelineConfig;
  /** The gates' decisions; computed from the memory when absent. */
  plan?: TurnPlan;
  /** Ask for these steps instead of the plan's (split mode asks one step at a time). */
  steps?: readonly PipelineStep[];
  earlier?: readonly EarlierStep[];
}

export interface AssembledPrompt {
  messages: ChatMessage[];
  /** The sections that went in, in prompt order. */
  sections: PromptSection[];
  plan: TurnPlan;
  /** The steps the instructions ask for. */
  steps: PipelineStep[];
  /** The tags the answer should hold: the `format` of the call. */
  tags: CognitiveTag[];
  /** The prompt's size, by the same estimate as the sections. */
  tokens: number;
  /**
   * The first turn's persona and skills, which the turn keeps in memory so later turns carry
   * them as a resumed session would (undefined after the first turn).
   */
  personaContext?: string;
}

function formatSkills(skills: string | readonly Skill[]): string {
  if (typeof skills === "string") return skills.trim() ? neutralizeTags(skills.trim()) : "";
  if (skills.length === 0) return "";
  return `## Available Skills\n${skills.map((s) => `- ${s.name}: ${s.description}`).join("\n")}`;
}

/**
 * The thread so far: memories outside the default region (the first turn's persona, a
 * blueprint's context) always, then the last `historyWindow` conversation memories. The
 * checks' bookkeeping is left out: it is for the gates, not the model.
 */
function historyMessages(memory: WorkingMemory, window: number): ChatMessage[] {
  const isCheck = (m: Memory) => {
    const kind = pipelineMarker(m)?.kind;
    return kind === "userModelCheck" || kind === "soulStateCheck";
  };
  const context = memory.memories.filter((m) => regionOf(m) !== DEFAULT_REGION);
  const conversation = memory.memories.filter((m) => regionOf(m) === DEFAULT_REGION && !isCheck(m));
  const recent = window > 0 ? conversation.slice(-window) : [];
  return [...context, ...recent].map((m): ChatMessage => {
    // Earlier user messages (any memory of outside origin: untrustedMemory.ts) are fenced
    // too, without a label each: the current message's label says they are untrusted as well.
    if (isUntrustedMemory(m)) return { role: m.role, content: fenceBlock(`${safeName(m.name ?? "User")}: ${m.content}`) };
    const msg: ChatMessage = { role: m.role, content: neutralizeTags(m.content) };
    if (m.name !== undefined) msg.name = m.name;
    return msg;
  });
}

const EARLIER_TITLES: Readonly<Record<PipelineStep, string>> = {
  internal_monologue: "Your internal monologue",
  external_dialogue: "What you said",
  user_model_check: "Your user model check",
  user_model_update: "Your user model update",
  soul_state_check: "Your soul state check",
  soul_state_update: "Your soul state update",
};

/**
 * The user model, as the soul's own notes: written by the soul, but from what the person said
 * (and headed with their name), so fenced as untrusted like any text that may quote them.
 */
function formatUserModel(soulName: string, userName: string, userModel: string | undefined): string {
  const model = userModel?.trim() ? userModel.trim() : blankUserModel(safeName(userName));
  const label = `What ${safeName(soulName, "the soul")} understands about ${quotedName(userName)} so far, written from what they said`;
  return `## User Model\n\n${fenceUntrusted(label, model)}`;
}

function formatEarlier(earlier: readonly EarlierStep[]): string {
  if (earlier.length === 0) return "";
  const lines = earlier.map((e) => `${EARLIER_TITLES[e.step]}${e.verb ? ` (${safeName(e.verb, "")})` : ""}:\n${neutralizeTags(e.content)}`);
  return `## Earlier Steps This Turn\n\n${lines.join("\n\n")}`;
}

export function assemblePrompt(input: AssembleInput): AssembledPrompt {
  const config = input.config ?? DEFAULT_PIPELINE_CONFIG;
  const plan =
    input.plan ??
    planTurn(input.memory, {
      config,
      ...(input.soulState ? { soulState: input.soulState } : {}),
      ...(input.processes ? { processes: input.processes } : {}),
    });
  const steps = [...(input.steps ?? plan.steps)];
  const soulName = input.memory.soulName;
  const userName = safeName(input.message.userName);
  const messages: ChatMessage[] = [];
  const sections: PromptSection[] = [];

  const add = (name: PromptSectionName, role: ChatRole | "mixed", contents: readonly ChatMessage[]) => {
    if (contents.length === 0) return;
    messages.push(...contents);
    const text = contents.map((m) => m.content).join("\n");
    sections.push({ name, role, messages: contents.length, chars: text.length, tokens: estimateTokens(text) });
  };
  const one = (name: PromptSectionName, role: ChatRole, content: string) => {
    if (content.trim()) add(name, role, [{ role, content }]);
  };

  add("history", "mixed", historyMessages(input.memory, config.historyWindow));
  const firstContext: string[] = [];
  if (plan.firstTurn) {
    const persona = input.persona?.trim() ?? "";
    const skills = input.skills !== undefined ? formatSkills(input.skills) : "";
    one("persona", "system", persona);
    one("skills", "system", skills);
    firstContext.push(...[persona, skills].filter((t) => t.trim()));
  }
  // The process shown is the one the turn runs, resolved from the table: never a stored string.
  one("soulState", "system", formatSoulState({ ...input.soulState, currentProcess: plan.process.name }));
  one("soulNotes", "assistant", formatSoulNotes(input.soulState ?? {}));
  // The soul's own recall, so assistant role; no `name` field, because the text already
  // names the soul and some providers only accept token-like names.
  if (input.whisper !== undefined) one("intuition", "assistant", formatIntuition(soulName, input.whisper));
  if (plan.userModelReason) one("userModel", "assistant", formatUserModel(soulName, input.message.userName, input.userModel));
  one("instructions", "system", buildCognitiveInstructions(steps, plan.process.instructionOverrides));
  one("earlierSteps", "assistant", formatEarlier(input.earlier ?? []));
  one(
    "message",
    "user",
    // No `name` on the message: the fenced text already says who speaks, and a name field
    // would carry an outside string past the fence.
    `## Current Message\n\n${fenceUntrusted(CURRENT_MESSAGE_LABEL, `${userName}: ${input.message.text}`)}`,
  );

  const assembled: AssembledPrompt = {
    messages,
    sections,
    plan,
    steps,
    tags: tagsOf(steps),
    tokens: sections.reduce((sum, s) => sum + s.tokens, 0),
  };
  if (firstContext.length) assembled.personaContext = firstContext.join("\n\n");
  return assembled;
}
