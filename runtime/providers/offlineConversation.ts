/**
 * What the offline model reads from a conversation: the seed for its deterministic choices,
 * the step's instruction, who spoke last and what they said.
 *
 * It exists apart from the offline model because reading a conversation (fences, Open Souls'
 * `Name said: "..."` frames, snippets) is its own concern, shared by the text, tagged and
 * JSON answers.
 */
import { fnv1a } from "./offlineChoice.ts";
import type { ChatMessage } from "./LanguageModel.ts";

export interface Conversation {
  /** Hash of the whole conversation: the root of every deterministic choice. */
  seed: number;
  /** The step's instruction: the final message when it is a system message. */
  command: string;
  soulName?: string;
  /** Who spoke last: the user message's name, an Open Souls `Name said: "..."` speaker, or undefined. */
  speaker?: string;
  /** What the last user message said, cleaned and shortened. Empty when there is none. */
  said: string;
  /**
   * Something the same speaker said before the last message, so replies show the memory at
   * work. Only theirs: "Earlier you told me" must not hand them someone else's words (a
   * daimon speaking in the room, another person in the channel).
   */
  earlier?: string;
  /** How many user messages the conversation holds. */
  userTurns: number;
  /** The last user message as written (line breaks kept): a daimon's transcript is one message. */
  lastUserRaw: string;
}

const SNIPPET_MAX = 100;

export function readConversation(messages: readonly ChatMessage[]): Conversation {
  const seed = fnv1a(messages.map((m) => `${m.role}\u0000${m.name ?? ""}\u0000${m.content}`).join("\u0001"));
  const last = messages.at(-1);
  const command = last?.role === "system" ? last.content : "";
  const soulName =
    (last?.role === "system" ? last.name : undefined) ??
    /Model the (?:mind|psyche) of ([^.\n]+)\./.exec(command)?.[1]?.trim() ??
    undefined;

  const users = messages.filter((m) => m.role === "user");
  const lastUser = users.at(-1);
  let said = "";
  let speaker = lastUser?.name;
  if (lastUser) {
    const read = userText(lastUser.content);
    speaker ??= read.speaker;
    said = snippet(read.text);
  }
  // The longest earlier message is usually the one with something worth remembering.
  const earlierTexts = users
    .slice(0, -1)
    .map((m) => ({ name: m.name, ...userText(m.content) }))
    .filter((m) => (m.name ?? m.speaker) === speaker)
    .map((m) => snippet(m.text));
  const earlier = earlierTexts.reduce<string | undefined>((best, t) => (t.length > (best?.length ?? 0) ? t : best), undefined);
  return { seed, command, soulName, speaker, said, earlier, userTurns: users.length, lastUserRaw: lastUser?.content ?? "" };
}

/**
 * A user message's text: inside the prompt's fence, without Open Souls' `Name said: "..."`
 * frame or the pipeline's `Name: text` line (only inside a fence, where the pipeline puts it,
 * so a user's own "Note: ..." is left alone).
 */
function userText(content: string): { text: string; speaker?: string } {
  const fenced = lastFencedBlock(content);
  const text = fenced ?? content;
  const perception = /^\s*([^\n:"]{1,60}?) [a-z][\w ]{0,30}: "([\s\S]*)"\s*$/.exec(text);
  if (perception) return { text: perception[2], speaker: perception[1] };
  const line = fenced === undefined ? null : /^([^\n:"]{1,40}): ([\s\S]*)$/.exec(text);
  return line ? { text: line[2], speaker: line[1] } : { text };
}

/** The inner text of the last fenced block: where prompts put the (untrusted) user message. */
export function lastFencedBlock(text: string): string | undefined {
  const fences = [...text.matchAll(/^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n\1[ \t]*$/gm)];
  return fences.at(-1)?.[2];
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SNIPPET_MAX ? `${flat.slice(0, SNIPPET_MAX - 1).trimEnd()}…` : flat;
}
