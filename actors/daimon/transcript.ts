/**
 * What a daimon remembers of the conversation it watches: a short, bounded transcript. It
 * is bounded in lines and in characters per line because the daimon runs beside every
 * soul it watches and must stay cheap, and because a divination only needs the recent
 * drift of the talk, not its history.
 */
import { safeName } from "../../runtime/cognition/index.ts";

/** Who said a line: someone talking to the soul, the soul itself, or the daimon aloud. */
export type TranscriptRole = "other" | "soul" | "daimon";

export interface TranscriptLine {
  readonly speaker: string;
  readonly role: TranscriptRole;
  readonly text: string;
}

export const DEFAULT_TRANSCRIPT_LINES = 12;
/** Longer lines are cut: one pasted document must not crowd out the rest of the talk. */
export const MAX_LINE_CHARS = 1000;

/** The transcript with one more line, keeping only the last `maxLines`. */
export function appendLine(
  transcript: readonly TranscriptLine[],
  line: TranscriptLine,
  maxLines: number = DEFAULT_TRANSCRIPT_LINES,
): readonly TranscriptLine[] {
  const flat = line.text.replace(/\s+/g, " ").trim();
  const text = flat.length > MAX_LINE_CHARS ? `${flat.slice(0, MAX_LINE_CHARS - 1)}…` : flat;
  const next = [...transcript, { speaker: line.speaker, role: line.role, text }];
  const keep = Math.max(1, Math.floor(maxLines));
  return next.length > keep ? next.slice(next.length - keep) : next;
}

/**
 * `Speaker: text` lines, oldest first: how the transcript reaches a prompt (fenced there).
 * A speaker's name comes from outside (a display name) and is made one inert line, so it
 * cannot start a line of its own and put words in another speaker's mouth.
 */
export function formatTranscript(transcript: readonly TranscriptLine[]): string {
  return transcript.map((l) => `${safeName(l.speaker, "Someone")}: ${l.text.replace(/\s+/g, " ")}`).join("\n");
}
