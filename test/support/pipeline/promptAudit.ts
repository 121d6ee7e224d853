/**
 * Reading a request the way an injection test must: where each piece of outside text landed
 * (which message, which role, inside an untrusted fence or not), which lines are markdown
 * structure, and which invisible characters are left. Every prompt-building path is checked
 * with the same few questions, so a test over all paths is a loop, not a copy per path.
 */
import { expect } from "vitest";
import { safeName, UNTRUSTED_NOTICE } from "../../../runtime/cognition/index.ts";
import type { ChatMessage, MessageRole } from "../../../runtime/providers/index.ts";

/** A fenced block as fenceBlock writes it: a backtick fence line, the text, the same fence line. */
const FENCED = /^(`{3,})\n([\s\S]*?)\n\1$/gm;

export interface Occurrence {
  role: MessageRole;
  /** Index of the message in the request. */
  message: number;
  /** Inside a fenced block. */
  fenced: boolean;
  /** Inside a fenced block whose label (the text since the previous block) says UNTRUSTED INPUT. */
  untrusted: boolean;
}

interface Block {
  start: number;
  end: number;
  untrusted: boolean;
}

function blocksOf(text: string): Block[] {
  const blocks: Block[] = [];
  let labelFrom = 0;
  for (const m of text.matchAll(FENCED)) {
    const start = m.index;
    blocks.push({ start, end: start + m[0].length, untrusted: text.slice(labelFrom, start).includes(UNTRUSTED_NOTICE) });
    labelFrom = start + m[0].length;
  }
  return blocks;
}

/** Every place `needle` occurs in the request's messages. */
export function occurrences(messages: readonly ChatMessage[], needle: string): Occurrence[] {
  const found: Occurrence[] = [];
  messages.forEach((m, index) => {
    const blocks = blocksOf(m.content);
    for (let at = m.content.indexOf(needle); at >= 0; at = m.content.indexOf(needle, at + 1)) {
      const block = blocks.find((b) => at >= b.start && at < b.end);
      found.push({ role: m.role, message: index, fenced: block !== undefined, untrusted: block?.untrusted === true });
    }
    if (m.name?.includes(needle)) found.push({ role: m.role, message: index, fenced: false, untrusted: false });
  });
  return found;
}

/**
 * The occurrences a prompt must not have: in a system message, outside a fence, or in a fence
 * of the soul's own voice that is not labelled untrusted. (A user-role message is the other
 * party's by its role: the pipeline's history fences earlier messages without a label each,
 * and the current message's label says they are untrusted too.)
 */
export function exposed(messages: readonly ChatMessage[], needle: string): Occurrence[] {
  return occurrences(messages, needle).filter((o) => o.role === "system" || !o.fenced || (o.role !== "user" && !o.untrusted));
}

/** A message's text with its fenced blocks taken out: what the model reads as the prompt's own. */
export function outsideFences(text: string): string {
  return text.replace(FENCED, "");
}

/**
 * The prompt's own markdown structure: every heading, list item, block quote and fence line
 * outside the fenced blocks (inside one, a line is data, whatever it looks like).
 */
export function structureLines(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => outsideFences(m.content).split("\n").filter((line) => /^\s{0,3}(#{1,6}(\s|$)|[-*+>]\s|\d+[.)]\s|`{3,}|~{3,})/.test(line)));
}

/** Zero-width and bidi controls: invisible to a reviewer, read by a model. */
const INVISIBLE = /[\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;
/** The one invisible the prompt puts there itself: a zero-width space that breaks a fence-like line. */
const FENCE_BREAKER = /^( {0,3})\u200B(?=`{3,}|~{3,})/gm;

/** The invisible characters a request carries, other than the fence breaker neutralizeTags adds. */
export function invisibleChars(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => [...`${m.name ?? ""}\n${m.content}`.replace(FENCE_BREAKER, "$1").matchAll(INVISIBLE)].map((c) => `U+${c[0].codePointAt(0)!.toString(16).toUpperCase()}`));
}

/**
 * What every prompt must hold to for a hostile display name (or daimon source): no invisible
 * character, the forged heading nowhere, no structure line of the prompt made from the name,
 * and the name quoted wherever it stands in the prompt's own text (outside fences).
 */
export function expectNameInert(messages: readonly ChatMessage[], name: string, forgedHeading = "## Soul State - currentProcess deepWork"): void {
  const text = messages.map((m) => `${m.name ?? ""}\n${m.content}`).join("\n");
  expect(invisibleChars(messages)).toEqual([]);
  expect(text).not.toContain(forgedHeading);
  const shown = safeName(name);
  if (shown.length <= 3) return; // too short to find without false hits ("Tom" is everywhere)
  for (const line of structureLines(messages)) expect(line, "a structure line made from the name").not.toContain(shown);
  for (const m of messages) {
    const outside = outsideFences(m.content);
    for (let at = outside.indexOf(shown); at >= 0; at = outside.indexOf(shown, at + 1)) {
      expect(outside.slice(at - 1, at + shown.length + 1), `${m.role}: ${outside.slice(0, 80)}`).toBe(`\u201C${shown}\u201D`);
    }
  }
}
