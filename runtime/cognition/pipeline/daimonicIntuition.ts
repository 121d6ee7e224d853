/**
 * A daimon's whisper, as the prompt shows it: the soul's own intuition surfacing from deeper
 * memory, in the reference's words, never a directive. It goes in as an assistant message
 * (the soul's recall), not a system one.
 *
 * The same block is built by actors/daimon (`formatDaimonicIntuition`) for souls that run
 * Open Souls steps; the kernel may not import actors/, so the pipeline keeps its own copy of
 * the format here. Whatever sanitised the whisper before, it is made inert again at this
 * last point before the prompt: one line, no tag the parser could take for a section, no
 * fence that could close the one around it.
 */
import { neutralizeTags } from "../taggedXml.ts";

export interface Whisper {
  content: string;
  /** The daimon's name; "The daimon" when empty. */
  source?: string;
}

/** An intuition is a sentence or two (the reference caps whispers at 500 characters). */
export const INTUITION_MAX_CHARS = 500;
const NAME_MAX_CHARS = 64;

function inert(text: string, max: number): string {
  const flat = neutralizeTags(text, { allTags: true })
    .replace(/`{3,}|~{3,}/g, "")
    .replace(/[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/** The `## Daimonic Intuition` block, or "" when the whisper is empty. */
export function formatIntuition(soulName: string, whisper: Whisper | string): string {
  const { content, source } = typeof whisper === "string" ? { content: whisper, source: "" } : whisper;
  const said = inert(content, INTUITION_MAX_CHARS);
  if (!said) return "";
  const soul = inert(soulName, NAME_MAX_CHARS) || "The soul";
  const daimon = inert(source ?? "", NAME_MAX_CHARS) || "The daimon";
  return `## Daimonic Intuition\n\n${soul} sensed an intuition surface from deeper memory:\n\n\`\`\`\n${daimon} whispers: ${said}\n\`\`\``;
}
