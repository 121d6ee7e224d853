/**
 * Streaming the spoken part of a single-call answer while it arrives. The answer streams
 * as one text: monologue first, then dialogue, then the checks. Only what is inside the
 * top-level `<external_dialogue>` may reach the user, so the extractor re-reads the whole
 * buffer with the same parser as the final parse and releases dialogue text only when:
 * - every section before the dialogue is closed (an open monologue could still turn a
 *   `<external_dialogue>` it contains into its own content), and no fence line stands
 *   between them (a fence could still close around it);
 * - the text is not the start of a tag that could still become `</external_dialogue>`.
 * What has been released is always a prefix of what the parser reads at the end; if a
 * malformed answer ever breaks that, the extractor stops releasing and the final parse
 * (authoritative) is reported as diverged rather than contradicted.
 */
import { COGNITIVE_TAGS, parseTaggedAnswer } from "../taggedXml.ts";

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/m;
/** A partial closing tag is at most this long (`</external_dialogue >` with some spaces). */
const HOLDBACK = 64;

export class DialogueStreamExtractor {
  #buffer = "";
  #released = "";
  #diverged = false;
  readonly #max: number;

  constructor(maxChars = Number.POSITIVE_INFINITY) {
    // The final dialogue is cut with an ellipsis, so stop one short of the cut.
    this.#max = Math.max(0, maxChars - 1);
  }

  /** Whether the released text stopped being a prefix of the dialogue. */
  get diverged(): boolean {
    return this.#diverged;
  }

  get released(): string {
    return this.#released;
  }

  /** Feeds a chunk of the answer; returns the dialogue text that became safe to speak. */
  push(chunk: string): string {
    this.#buffer += chunk;
    if (this.#diverged) return "";
    const speakable = this.#speakable();
    return speakable === undefined ? "" : this.#release(speakable);
  }

  /** The end of the answer: whatever of the parsed dialogue was not released yet. */
  finish(dialogue: string): string {
    if (this.#diverged) return "";
    return this.#release(dialogue, true);
  }

  #release(text: string, final = false): string {
    const capped = final ? text : text.slice(0, this.#max);
    if (!capped.startsWith(this.#released)) {
      this.#diverged = true;
      return "";
    }
    const fresh = capped.slice(this.#released.length);
    this.#released = capped;
    return fresh;
  }

  #speakable(): string | undefined {
    const sections = parseTaggedAnswer(this.#buffer, { knownTags: COGNITIVE_TAGS });
    const at = sections.findIndex((s) => s.name === "external_dialogue");
    if (at < 0) return undefined;
    const before = sections.slice(0, at);
    if (before.some((s) => !s.closed)) return undefined;
    let outside = this.#buffer.slice(0, sections[at].start);
    for (const s of [...before].reverse()) outside = outside.slice(0, s.start) + outside.slice(s.end);
    if (FENCE_LINE.test(outside)) return undefined;
    const dialogue = sections[at];
    if (dialogue.closed) return dialogue.content;
    let content = dialogue.content;
    const lt = content.lastIndexOf("<");
    if (lt >= 0 && content.length - lt <= HOLDBACK && !content.slice(lt).includes(">")) content = content.slice(0, lt);
    return content.trimEnd();
  }
}
