/**
 * A soul's history as node control reports it: the soul now (`soul`), its committed turns
 * (`turns`) and a revert to an earlier turn (`revert`), for the debugger (docs/DEBUGGER.md).
 * IN PROGRESS: the lead is writing this file.
 */
import type { RevertReply, RevertRequest, SoulDetailReply, TurnsReply, TurnsRequest } from "./controlProtocol.ts";
import { ControlRequestError } from "./controlRequestError.ts";

export interface SoulHistory {
  soul(soulId: string): SoulDetailReply;
  turns(request: TurnsRequest): TurnsReply;
  revert(request: RevertRequest): Promise<RevertReply>;
}

export function soulHistory(): SoulHistory {
  const notYet = (): never => {
    throw new ControlRequestError("conflict", "not yet");
  };
  return { soul: notYet, turns: notYet, revert: async () => notYet() };
}
