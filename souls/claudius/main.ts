/**
 * main: the ordinary conversation, the reference's `main_process`. Every step of the pipeline
 * in one call (the soul state only every Nth turn). Where it goes:
 * - `frustrated` when this turn's soul-state update set emotionalState to frustrated;
 * - `problemSolving` (the ISM), at once for the same message, when the monologue flagged the
 *   message as an open-ended problem (`[open problem]`, see signals.ts); this turn's dialogue,
 *   one sentence on how Claudius will approach it, has been spoken already;
 * - otherwise it stays.
 * When the ISM hands back without having answered (it ran out of loops, or declared the goal
 * met without a Respond), main answers the message itself and does not flag it again.
 */
import type { MentalProcess } from "../../actors/soul/index.ts";
import { CLAUDIUS_MODES, processOfPipelineKey, PROBLEM_SOLVING } from "./modes.ts";
import type { ClaudiusContext } from "./options.ts";
import { runPipelineTurn, type ChainParams } from "./pipelineTurn.ts";
import { withRecall } from "./recall.ts";
import { flagsOpenProblem } from "./signals.ts";

export function mainProcess(ctx: ClaudiusContext): MentalProcess<ChainParams> {
  return async function main({ workingMemory, params }) {
    const turn = await runPipelineTurn(ctx, CLAUDIUS_MODES.main, workingMemory, params);
    const next = turn.result.nextProcess === undefined ? undefined : processOfPipelineKey(turn.result.nextProcess);
    if (next === "frustrated") {
      turn.settle("frustrated");
      return [turn.memory, "frustrated"];
    }
    if (params.from !== PROBLEM_SOLVING && flagsOpenProblem(turn.result)) {
      turn.settle(PROBLEM_SOLVING);
      // The whisper was for this whole turn: the ISM's steps sense it too.
      return [withRecall(turn.memory, turn.recall), PROBLEM_SOLVING, { executeNow: true }];
    }
    turn.settle("main");
    return turn.memory;
  };
}
