/**
 * frustrated: shorter answers (1-2 sentences, sharper verbs) and no user-model work. It checks
 * the soul state on every turn, and leaves as soon as the mood does: to `main` when this
 * turn's update sets emotionalState to neutral or engaged, to `deepWork` when it sets focused.
 */
import type { MentalProcess } from "../../actors/soul/index.ts";
import { CLAUDIUS_MODES, processOfPipelineKey } from "./modes.ts";
import type { ClaudiusContext } from "./options.ts";
import { runPipelineTurn, type ChainParams } from "./pipelineTurn.ts";

export function frustratedProcess(ctx: ClaudiusContext): MentalProcess<ChainParams> {
  return async function frustrated({ workingMemory, params }) {
    const turn = await runPipelineTurn(ctx, CLAUDIUS_MODES.frustrated, workingMemory, params);
    const next = turn.result.nextProcess === undefined ? undefined : processOfPipelineKey(turn.result.nextProcess);
    if (next === "main" || next === "deepWork") {
      turn.settle(next);
      return [turn.memory, next];
    }
    turn.settle("frustrated");
    return turn.memory;
  };
}
