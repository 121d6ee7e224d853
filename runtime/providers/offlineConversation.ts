/**
 * What the offline model reads from a conversation: the seed for its deterministic choices,
 * the step's instruction, who spoke last and what they said, what their words signal (see
 * offlineSignals.ts), the name they go by, and what the prompt's own sections hold (see
 * offlinePrompt.ts).
 *
 * It exists apart from the offline model because reading a conversation (fences, Open Souls'
 * `Name said: "..."` frames, snippets) is its own concern, shared by the text, tagged and
 * JSON answers.
 */
import { fnv1a } from "./offlineChoice.ts";
import { readPrompt, type PromptReading } from "./offlinePrompt.ts";
import { readSignals, statedName, type Signals } from "./offlineSignals.ts";
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
  /** What the last user message said, whole: inside its fence, without its speaker's frame. */
  lastUserText: string;
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
  /** What the last message signals (read from all of it, not the snippet). */
  signals: Signals;
  /**
   * What the same speaker said before the last message, as written, oldest first: what the
   * soul was told (a recall question is answered from it) and the turns a periodic soul-state
   * check did not see (offlineTags.ts).
   */
  told: string[];
  /** The name the person goes by, once given: in this message, earlier in the history, or in the user model. */
  name?: string;
  /** The name was given in the last message. */
  nameGivenNow: boolean;
  /** The prompt's own sections. */
  prompt: PromptReading;
}

/** How the offline model's monologue records a name, so later turns (and it) can find it in the history. */
export const NAME_NOTE = (name: string) => `Their name is ${name}.`;
const NAME_NOTE_PATTERN = /\bTheir name is (\p{L}[\p{L}'’-]{0,29}(?: \p{L}[\p{L}'’-]{0,29})?)\./u;

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
  let text = "";
  let speaker = lastUser?.name;
  if (lastUser) {
    const read = userText(lastUser.content);
    speaker ??= read.speaker;
    text = read.text;
  }
  const theirs = users
    .slice(0, -1)
    .map((m) => ({ name: m.name, ...userText(m.content) }))
    .filter((m) => (m.name ?? m.speaker) === speaker)
    .map((m) => m.text);
  // The longest earlier message is usually the one with something worth remembering.
  const earlier = theirs.map(snippet).reduce<string | undefined>((best, t) => (t.length > (best?.length ?? 0) ? t : best), undefined);
  const signals = readSignals(text);
  const name = signals.name ?? nameFromHistory(messages.slice(0, lastUser ? messages.lastIndexOf(lastUser) : 0), speaker);
  const prompt = readPrompt(messages);
  const c: Conversation = {
    seed,
    command,
    soulName,
    speaker,
    said: snippet(text),
    lastUserText: text,
    earlier,
    userTurns: users.length,
    lastUserRaw: lastUser?.content ?? "",
    signals,
    told: theirs,
    nameGivenNow: signals.name !== undefined,
    prompt,
  };
  const known = name ?? prompt.modelName;
  if (known) c.name = known;
  return c;
}

/**
 * The name most recently given, newest message first: the person saying it, or the soul's own
 * note of it (NAME_NOTE) carrying it on after their message has left the history window.
 */
function nameFromHistory(messages: readonly ChatMessage[], speaker: string | undefined): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user") {
      const read = userText(m.content);
      if ((m.name ?? read.speaker) !== speaker) continue;
      const name = statedName(read.text);
      if (name) return name;
    } else if (m.role === "assistant") {
      const noted = NAME_NOTE_PATTERN.exec(m.content)?.[1];
      if (noted) return noted;
    }
  }
  return undefined;
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

/**
 * The first words of a message: what the offline model notes as `currentTopic` when it reports
 * the soul state, and how it finds that message again in the history (offlineTags.ts).
 */
export function topicOf(text: string): string {
  return snippet(text).split(" ").slice(0, 6).join(" ");
}

export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SNIPPET_MAX ? `${flat.slice(0, SNIPPET_MAX - 1).trimEnd()}…` : flat;
}
