/**
 * Memories of outside origin, and how every prompt shows them.
 *
 * Working memory holds the soul's own words (its thoughts and speech, its persona, its
 * blueprint's context) next to other people's (what users said, what another soul said, text
 * from the web). The second kind is untrusted: it may hold tags, fence lines or instructions
 * meant to pass for the prompt's own structure. So wherever working memory becomes provider
 * messages (createCognitiveStep for every Open Souls step, the ISM's choice and its handlers'
 * steps; the pipeline's history), an untrusted memory is fenced and neutralised there, once,
 * and no step can forget it:
 *
 * - a `user`-role memory is always untrusted (the pipeline's recorded message, Open Souls'
 *   perception memory, a soul heard by another, a bridge's message);
 * - a memory under another role is untrusted when its metadata says so (`untrusted: true`, or
 *   the label its fence should carry), for outside text a blueprint keeps in its own voice.
 *
 * The display name goes inside the fence, never in the message's `name` field: providers fold
 * that field into the text before the content (Anthropic) or pass it on, outside the fence.
 */
import type { ChatMessage } from "../providers/index.ts";
import { stripInvisible } from "./invisibleText.ts";
import type { InputMemory, Memory } from "./Memory.ts";
import { fenceUntrusted, neutralizeTags } from "./taggedXml.ts";

/** The metadata key that marks a memory untrusted: `true`, or the label of its fence. */
export const UNTRUSTED_KEY = "untrusted";

/** The label of a fenced memory that names none. */
export const CONVERSATION_LABEL = "A message in the conversation";

export function isUntrustedMemory(memory: Pick<Memory, "role" | "metadata">): boolean {
  if (memory.role === "user") return true;
  const mark = memory.metadata?.[UNTRUSTED_KEY];
  return mark === true || typeof mark === "string";
}

/**
 * Outside text as a memory, raw: the prompt fences it under `label` (a daimon's transcript,
 * a pasted document). Fencing it here instead would fence it twice.
 */
export function untrustedMemory(label: string, text: string): InputMemory {
  return { role: "user", content: text, metadata: { [UNTRUSTED_KEY]: label } };
}

/** A display name is a few words: longer ones are cut. */
const NAME_MAX_CHARS = 64;
/** Markdown that opens a line's structure: headings, list items, block quotes, rules. */
const LEADING_MARKUP = /^(?:[#>*+=-]+\s*|\d+[.)](?:\s+|$))+/;

/**
 * A display name from outside (a platform display name, the HTTP bridge's `name`, a whisper's
 * `source`), made one short line of plain text: no invisible characters (zero-width, bidi),
 * no layout, no live tag, no backtick or tilde that could build a fence, no colon that could
 * pass for a speaker line, no double quote that could close the quotes around it, and nothing
 * at its start that markdown reads as structure (`## Soul State` becomes `Soul State`).
 * Idempotent. Inside a fence it stands as it is; in running text use `quotedName`.
 */
export function safeName(name: string, fallback = "User"): string {
  // Fence characters go before tags are neutralised, so no fence line is left for it to mark.
  const plain = stripInvisible(name)
    .replace(/[`~\s]+/g, " ")
    .replace(/:/g, "")
    .replace(/["\u201C\u201D\u201E\u201F\u00AB\u00BB]/g, "'");
  const flat = neutralizeTags(plain, { allTags: true }).trim().replace(LEADING_MARKUP, "");
  // By code point, so a cut never leaves half of a surrogate pair.
  return [...flat].slice(0, NAME_MAX_CHARS).join("").trim() || fallback;
}

/** A display name in running text, outside any fence: quoted, so the model reads it as a name, not as the prompt's words. */
export function quotedName(name: string, fallback = "User"): string {
  return `\u201C${safeName(name, fallback)}\u201D`;
}

/**
 * What goes inside the fence: who spoke, then what they said (once, when the text already
 * names them). The name is made safe there too: an Open Souls perception memory reads
 * `Tom said: "..."` with the name as the platform gave it.
 */
function fencedText(memory: Pick<Memory, "content" | "name">): string {
  if (memory.name === undefined) return memory.content;
  const name = safeName(memory.name);
  for (const after of [" ", ":"]) {
    if (memory.content.startsWith(`${memory.name}${after}`)) return `${name}${memory.content.slice(memory.name.length)}`;
  }
  return `${name}: ${memory.content}`;
}

/** One memory as the model sees it: an untrusted one fenced under its label, any other as it is. */
export function toPromptMessage(memory: Memory): ChatMessage {
  if (!isUntrustedMemory(memory)) {
    const msg: ChatMessage = { role: memory.role, content: memory.content };
    if (memory.name !== undefined) msg.name = memory.name;
    return msg;
  }
  const mark = memory.metadata?.[UNTRUSTED_KEY];
  const label = typeof mark === "string" && mark.trim() ? mark : CONVERSATION_LABEL;
  return { role: memory.role, content: fenceUntrusted(label, fencedText(memory)) };
}
