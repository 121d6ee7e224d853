import type { Proposal, ProposalKind } from "../vocabulary/index.ts";
import type { GateContext } from "./Gate.ts";

/**
 * Ready-made triggers. A gate that only matters for some proposals (or some perceptions)
 * says so in its trigger, and the chain skips it for the rest, as the reason stage only
 * reasons about user input and chat messages.
 */
export type GateTrigger = (ctx: GateContext, proposal: Proposal) => boolean;

/** Proposals of these kinds. */
export function whenKind(...kinds: ProposalKind[]): GateTrigger {
  const set = new Set(kinds);
  return (_ctx, proposal) => set.has(proposal.kind);
}

/** Dispatched actions with one of these names. */
export function whenAction(...actions: string[]): GateTrigger {
  const set = new Set(actions);
  return (_ctx, proposal) => proposal.kind === "dispatch" && proposal.action !== undefined && set.has(proposal.action);
}

/** Proposals answering a perception with one of these actions (e.g. "said"). */
export function whenPerception(...actions: string[]): GateTrigger {
  const set = new Set(actions);
  return (ctx) => ctx.perception !== undefined && set.has(ctx.perception.action);
}

/** Only in one phase (review before the commit, or dispatch). */
export function inPhase(phase: GateContext["phase"]): GateTrigger {
  return (ctx) => ctx.phase === phase;
}
