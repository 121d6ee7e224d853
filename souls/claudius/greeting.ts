/**
 * greeting: the first exchange. Claudius introduces himself in a sentence and answers; the
 * persona goes into the prompt (first turn), the user model is checked and written, the soul
 * state is not checked (nothing has happened to it yet). Always hands over to `main`.
 */
import type { MentalProcess } from "../../actors/soul/index.ts";
import { CLAUDIUS_MODES } from "./modes.ts";
import type { ClaudiusContext } from "./options.ts";
import { runPipelineTurn, type ChainParams } from "./pipelineTurn.ts";

export function greetingProcess(ctx: ClaudiusContext): MentalProcess<ChainParams> {
  return async function greeting({ workingMemory, params }) {
    const turn = await runPipelineTurn(ctx, CLAUDIUS_MODES.greeting, workingMemory, params);
    turn.settle("main");
    return [turn.memory, "main"];
  };
}
