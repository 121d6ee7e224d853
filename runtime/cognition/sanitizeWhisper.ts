/**
 * Every whisper is sanitised before it goes anywhere, whatever produced it: the daimon's own
 * model, a remote daimon over HTTP, an operator at the CLI. A whisper ends up inside the
 * soul's prompt, so it must not be able to carry structure into it: no tags that our tagged
 * parser (or a model) could take for a section, no code fences that could close the fence
 * the intuition is shown in, no invisible characters, no layout. What is left is one line of
 * plain prose, short enough to be an intuition rather than a second prompt.
 */
import { stripInvisible } from "./invisibleText.ts";
import { COGNITIVE_TAGS } from "./taggedXml.ts";

/** The reference pipeline's cap: an intuition is a sentence or two, never a document. */
export const WHISPER_MAX_CHARS = 500;

/** How much raw text per character of output is looked at; markup rarely outweighs prose 16 to 1. */
const RAW_FACTOR = 16;

export interface SanitizeWhisperOptions {
  /** Defaults to WHISPER_MAX_CHARS. */
  maxChars?: number;
  /** Tag names to neutralise besides the cognitive ones (a pipeline's own sections). */
  tags?: readonly string[];
}

// Entity spellings of < and > would turn back into brackets for any reader that decodes them.
const LT_ENTITY = /&(?:lt|#0*60|#x0*3c);?/gi;
const GT_ENTITY = /&(?:gt|#0*62|#x0*3e);?/gi;
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const CDATA = /<!\[CDATA\[|\]\]>/gi;
// As loose as the tagged parser (`< / name attr >`), plus declarations and processing instructions.
const TAG = /<\s*\/?\s*[A-Za-z_!?][^<>]*>/g;
// What is left of a tag that never closed: drop its bracket so it cannot open anything.
const TAG_OPENER = /<(?=\s*\/?\s*[A-Za-z_!?])/g;
const FENCE_LINE = /^[ \t]*(?:`{3,}[^`\n]*|~{3,}[^\n]*)$/gm;
const FENCE_RUN = /`{3,}|~{3,}/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function tagNamePattern(extra: readonly string[]): RegExp {
  const names = [...new Set([...COGNITIVE_TAGS, ...extra])].filter((n) => n.trim() !== "");
  return new RegExp(names.map(escapeRegExp).join("|"), "gi");
}

const DEFAULT_TAG_NAMES = tagNamePattern([]);

function onePass(text: string, tagNames: RegExp): string {
  return (
    stripInvisible(text)
      .replace(LT_ENTITY, "<")
      .replace(GT_ENTITY, ">")
      .replace(COMMENT, " ")
      .replace(CDATA, " ")
      .replace(TAG, " ")
      .replace(TAG_OPENER, "")
      // Our section names, even bare, read as words: `external_dialogue` -> `external dialogue`.
      .replace(tagNames, (name) => name.replace(/_/g, " "))
      .replace(FENCE_LINE, " ")
      .replace(FENCE_RUN, " ")
      .replace(/\s+/g, " ")
      // A tag taken out before punctuation leaves a space there: `<b>yes</b>.` -> `yes.`
      .replace(/ ([,.;:!?)\]])/g, "$1")
      .trim()
  );
}

/**
 * Cuts at the last space that fits and marks the cut with `…`, so the soul does not take a
 * truncated thought for a whole one. A single word longer than the cap is cut hard.
 */
function capAtWord(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return text.slice(0, Math.max(0, maxChars));
  const budget = maxChars - 1;
  let cut = text.slice(0, budget + 1).lastIndexOf(" ");
  if (cut < budget / 2) cut = budget;
  let head = text.slice(0, cut).replace(/[\s,;:–—-]+$/, "");
  // Never leave half of a surrogate pair behind.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${head}…`;
}

/**
 * One line of plain prose, at most `maxChars` long; "" when nothing usable is left (callers
 * treat that as no whisper). Idempotent: sanitising a sanitised whisper changes nothing.
 */
export function sanitizeWhisper(raw: string, options: SanitizeWhisperOptions = {}): string {
  const maxChars = options.maxChars ?? WHISPER_MAX_CHARS;
  const tagNames = options.tags?.length ? tagNamePattern(options.tags) : DEFAULT_TAG_NAMES;
  // Only the head can survive the cap, so a huge input is cut first: this bounds the work
  // below, which an adversarial input (deeply nested tags) could otherwise make quadratic.
  let text = typeof raw === "string" ? raw.slice(0, Math.max(maxChars, 1) * RAW_FACTOR) : "";
  // Removing one construct can join the pieces of another (`<a<b>c>`, a tag inside a fence
  // run), so repeat until nothing changes. Every pass that changes the text shortens it
  // (the tag-name pass only once), so this ends.
  for (;;) {
    const next = onePass(text, tagNames);
    if (next === text) break;
    text = next;
  }
  return capAtWord(text, maxChars);
}
