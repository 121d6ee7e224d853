/**
 * deepWork: heads down on the current task (soul state `currentTask`), no user-model work,
 * the soul state checked every turn. It goes back to `main` when the task is complete: this
 * turn's soul-state update cleared `currentTask` (an empty `currentTask:` line, or "none",
 * "done"...), or the monologue ended with `[task complete]` (see signals.ts). Leaving clears
 * `currentTask` in soul memory, whichever signal it was.
 */
import type { MentalProcess } from "../../actors/soul/index.ts";
import { CLAUDIUS_MODES } from "./modes.ts";
import type { ClaudiusContext } from "./options.ts";
import { runPipelineTurn, type ChainParams } from "./pipelineTurn.ts";
import { completesTask } from "./signals.ts";

export function deepWorkProcess(ctx: ClaudiusContext): MentalProcess<ChainParams> {
  return async function deepWork({ workingMemory, params }) {
    const turn = await runPipelineTurn(ctx, CLAUDIUS_MODES.deepWork, workingMemory, params);
    if (completesTask(turn.result)) {
      turn.settle("main", { currentTask: "" });
      return [turn.memory, "main"];
    }
    turn.settle("deepWork");
    return turn.memory;
  };
}
