import type { Outlet } from "../vocabulary/index.ts";
import { ledgerOf, TurnToolBox } from "../tool/index.ts";
import type { ProcessRun } from "./ProcessRun.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulEvent } from "./SoulEvent.ts";

/** What of the soul a turn's tool box needs. */
export interface ToolHost {
  readonly soulId: string;
  readonly outlet: Outlet;
  readonly store: object;
  readonly clock: Clock;
  emit(event: SoulEvent): void;
}

/**
 * The tool box of one run (none when the soul has no tools): its calls are reviewed by the
 * soul's outlet (the gate chain, the same review a turn's speech gets, so the same gates,
 * triggers and fail-closed rule), counted per phase (the turn's draft, or the subprocess
 * phase every fork of it shares), named by the perception, recorded in the soul's store.
 */
export function turnToolBox(host: ToolHost, run: ProcessRun): TurnToolBox | undefined {
  const registry = run.host.services.tools;
  if (!registry) return undefined;
  const { outlet, clock } = host;
  const { perception } = run;
  return new TurnToolBox(registry, {
    soulId: host.soulId,
    turnId: run.draft.turnId,
    turnKey: run.draft.root,
    causation: perception.id,
    phase: run.kind === "subprocess" ? "sub" : "turn",
    ...(perception.meta !== undefined ? { meta: perception.meta } : {}),
    signal: run.signal,
    now: () => clock.now(),
    review: (proposal, context) => (outlet.review ? outlet.review(proposal, { ...context, perception }) : proposal),
    emit: (event) => host.emit(event),
    ledger: ledgerOf(host.store),
  });
}
