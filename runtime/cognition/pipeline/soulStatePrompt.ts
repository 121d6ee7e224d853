/**
 * How the soul state reaches the prompt, split by who can write a value:
 *
 * - `## Soul State`, in the system prompt: only the closed keys, whose values no person can
 *   choose: the mood (one of five) and the process the turn runs (a name from the blueprint's
 *   table). Keys at their defaults are left out, as in the reference.
 * - `## Your Notes`, in the soul's own voice (assistant role): the free-text keys
 *   (SOUL_STATE_TEXT_KEYS), fenced and labelled untrusted, because a value may hold a
 *   person's words however it was saved. So user text never gets the system prompt's
 *   authority, and a value cannot close the fence, open a heading or carry a live tag.
 *
 * Both are rendered from the stored state, whatever path saved it.
 */
import { stripInvisible } from "../invisibleText.ts";
import { fenceUntrusted } from "../taggedXml.ts";
import { oneLine, PROCESS_NAME, soulStateOf, SOUL_STATE_DEFAULTS, SOUL_STATE_TEXT_KEYS, type SoulState } from "./soulState.ts";

export const SOUL_NOTES_HEADING = "## Your Notes";

const NOTES_LABEL = "Your soul state's notes on the conversation, in your own words; they may quote the people you talk with";

/**
 * `## Soul State` with the closed keys that differ from their defaults, or "" when none do.
 * A `currentProcess` that is not a process name is not shown (the router runs `main_process`
 * for it anyway); the pipeline passes the process it resolved.
 */
export function formatSoulState(state: Partial<SoulState>): string {
  const full = soulStateOf(state);
  const lines: string[] = [];
  if (full.emotionalState !== SOUL_STATE_DEFAULTS.emotionalState) lines.push(`- emotionalState: ${full.emotionalState}`);
  if (full.currentProcess !== SOUL_STATE_DEFAULTS.currentProcess && PROCESS_NAME.test(full.currentProcess)) {
    lines.push(`- currentProcess: ${full.currentProcess}`);
  }
  return lines.length ? `## Soul State\n${lines.join("\n")}` : "";
}

/** `## Your Notes`: the free-text keys that are set, one inert line each, fenced as untrusted; "" when none is. */
export function formatSoulNotes(state: Partial<SoulState>): string {
  const full = soulStateOf(state);
  const lines = SOUL_STATE_TEXT_KEYS.map((k) => [k, oneLine(stripInvisible(full[k]))] as const)
    .filter(([, value]) => value !== "")
    .map(([k, value]) => `- ${k}: ${value}`);
  if (!lines.length) return "";
  return `${SOUL_NOTES_HEADING}\n\n${fenceUntrusted(NOTES_LABEL, lines.join("\n"), { allTags: true })}`;
}
