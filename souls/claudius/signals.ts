/**
 * The signals that move Claudius between processes besides the emotional state, read from
 * what the turn's single pipeline call already produced: no extra model call decides them.
 *
 * - Open problem (main -> problemSolving): main's monologue instruction asks the model to end
 *   the monologue with `[open problem]` when the message deserves deliberate, multi-step work.
 *   The monologue is private and comes before the dialogue, so the marker costs nothing and
 *   never reaches the user. Ordinary turns stay at one call.
 * - Task complete (deepWork -> main): the turn's `<soul_state_update>` clears `currentTask`
 *   (an empty `currentTask:` line), or the monologue ends with `[task complete]`. The
 *   soul-state form is the primary one (deepWork checks its state every turn); the marker is
 *   there for a model that finishes the work on a turn where it reports no state change.
 *
 * Markers are matched loosely (case, spaces, `_`/`-`) because models drift on all three, but
 * only where the model puts its own: at the very end of the monologue. A monologue often
 * quotes the person, and a marker in their words must not choose the process for them, so a
 * marker counts only when it ends the monologue's last line, and that line is not inside a
 * fence (closed or still open), not a block quote, and has no quote or code span left open
 * before the marker. What stays possible: a model that ends its monologue with the person's
 * words unquoted, marker and all.
 */
import type { PipelineResult } from "../../runtime/cognition/index.ts";

/**
 * What problemSolving's Escalate writes as `currentTask`: a reference to the message that
 * raised the problem, in the soul's words only. The message reaches the prompt fenced, as
 * every message does; copying it into the state would carry the person's words there.
 * deepWork asks the model to replace it with a name of its own.
 */
export const ESCALATED_TASK = "the problem in the message you took up as a task";

export const OPEN_PROBLEM_MARKER = "[open problem]";
export const TASK_COMPLETE_MARKER = "[task complete]";

const OPEN_PROBLEM = /\[\s*open[\s_-]*problem\s*\]/i;
const TASK_COMPLETE = /\[\s*task[\s_-]*complete\s*\]/i;

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/** Whether the monologue ends with the marker as the model's own (see the file's comment). */
function endsWithOwnMarker(monologue: string, marker: RegExp): boolean {
  const lines = monologue.trimEnd().split("\n");
  const last = lines.at(-1) ?? "";
  // An odd number of fence lines before the last one: it is inside a fence the model opened.
  if (lines.slice(0, -1).filter((l) => FENCE_LINE.test(l)).length % 2 === 1) return false;
  if (FENCE_LINE.test(last) || /^\s*>/.test(last)) return false;
  const at = new RegExp(`(${marker.source})[\\s.!]*$`, marker.flags).exec(last);
  if (!at) return false;
  const before = last.slice(0, at.index);
  const count = (c: string) => before.split(c).length - 1;
  return count('"') % 2 === 0 && count("`") % 2 === 0 && count("\u201c") === count("\u201d");
}

/** The monologue flagged the message as an open-ended problem. */
export function flagsOpenProblem(result: Pick<PipelineResult, "monologue">): boolean {
  return result.monologue !== undefined && endsWithOwnMarker(result.monologue, OPEN_PROBLEM);
}

/** The turn finished the current task: `currentTask` cleared by the update, or the marker in the monologue. */
export function completesTask(result: Pick<PipelineResult, "monologue" | "soulStateUpdate">): boolean {
  const cleared = result.soulStateUpdate?.currentTask;
  if (cleared !== undefined && isEmptyTask(cleared)) return true;
  return result.monologue !== undefined && endsWithOwnMarker(result.monologue, TASK_COMPLETE);
}

/** Models write "none" or "-" for an empty value as often as they leave it empty. */
export function isEmptyTask(value: string): boolean {
  return /^\s*(?:|none|n\/a|-|—|done|complete|completed|finished)\s*$/i.test(value);
}
