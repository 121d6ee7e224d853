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
 * Markers are matched loosely (case, spaces, `_`/`-`) because models drift on all three.
 */
import type { PipelineResult } from "../../runtime/cognition/index.ts";

export const OPEN_PROBLEM_MARKER = "[open problem]";
export const TASK_COMPLETE_MARKER = "[task complete]";

const OPEN_PROBLEM = /\[\s*open[\s_-]*problem\s*\]/i;
const TASK_COMPLETE = /\[\s*task[\s_-]*complete\s*\]/i;

/** The monologue flagged the message as an open-ended problem. */
export function flagsOpenProblem(result: Pick<PipelineResult, "monologue">): boolean {
  return result.monologue !== undefined && OPEN_PROBLEM.test(result.monologue);
}

/** The turn finished the current task: `currentTask` cleared by the update, or the marker in the monologue. */
export function completesTask(result: Pick<PipelineResult, "monologue" | "soulStateUpdate">): boolean {
  const cleared = result.soulStateUpdate?.currentTask;
  if (cleared !== undefined && isEmptyTask(cleared)) return true;
  return result.monologue !== undefined && TASK_COMPLETE.test(result.monologue);
}

/** Models write "none" or "-" for an empty value as often as they leave it empty. */
export function isEmptyTask(value: string): boolean {
  return /^\s*(?:|none|n\/a|-|—|done|complete|completed|finished)\s*$/i.test(value);
}
