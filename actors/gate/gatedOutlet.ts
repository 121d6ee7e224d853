import type { Outlet, ReviewContext } from "../vocabulary/index.ts";
import type { Interception, Proposal, ReviewVerdict } from "../vocabulary/index.ts";
import type { Approvals } from "./approvals.ts";
import type { GateContext, GatePhase } from "./Gate.ts";
import type { ChainResult, GateChain } from "./gateChain.ts";
import { VerifiedStream } from "./verifiedStream.ts";

/** Thrown by `deliver` when a gate could not decide at dispatch: the proposal stays in the outbox. */
export class GateDispatchError extends Error {
  readonly proposalId: string;
  constructor(proposalId: string, reason: string) {
    super(`proposal ${proposalId} not delivered: ${reason}`);
    this.name = "GateDispatchError";
    this.proposalId = proposalId;
  }
}

export interface GatedOutletOptions {
  /** Where held proposals wait for a human. Without it a hold blocks like an interception. */
  approvals?: Approvals;
  /** The context the gates see (default `{ soulId, phase }`). */
  context?: (proposal: Proposal, phase: GatePhase) => GateContext;
  /**
   * Stream speech while it is produced (default false): in pieces the chain has passed, the
   * text so far checked at each sentence end (verifiedStream.ts), so nothing unverified is
   * ever shown and an interception stops the stream there.
   */
  streamChunks?: boolean;
  /** A committed proposal that failed re-verification at dispatch and was not delivered. */
  onBlocked?: (proposal: Proposal, result: Extract<ChainResult, { ok: false }>) => void;
}

export interface GatedOutlet extends Outlet {
  review(proposal: Proposal, context?: ReviewContext): Promise<ReviewVerdict>;
  deliver(proposal: Proposal): Promise<void>;
  readonly chain: GateChain;
  readonly inner: Outlet;
}

/**
 * An outlet behind a gate chain. `review` runs the chain before the turn commits (pass,
 * transform, intercept, or hold for approval). `deliver` runs it again at dispatch time,
 * because the world may have changed since (a budget spent, a rule tightened): a proposal
 * that fails now is not delivered, and the decision is recorded (an interception drops it; a
 * gate error or timeout leaves it in the outbox for a later attempt). Approved proposals go out
 * through the same re-verification, with the approval in the context.
 */
export function gatedOutlet(inner: Outlet, chain: GateChain, options: GatedOutletOptions = {}): GatedOutlet {
  const contextOf = (proposal: Proposal, phase: GatePhase): GateContext => ({
    soulId: proposal.soulId,
    ...options.context?.(proposal, phase),
    phase,
  });
  const { approvals } = options;

  const holdFor = async (result: Extract<ChainResult, { ok: false }>): Promise<Interception> => {
    if (!approvals) {
      return { intercepted: true, kind: "event", reason: `${result.gate}: ${result.interception.reason} (no approval queue is configured, so it is blocked)` };
    }
    await approvals.hold(result.proposal, { gate: result.gate, reason: result.interception.reason });
    return { intercepted: true, kind: "event", reason: `${result.gate}: ${result.interception.reason} (proposal ${result.proposal.id})` };
  };

  // Not queued: a human's approval would come after the turn that needed it, and would
  // deliver a call that was only ever meant to be reviewed (see ReviewContext.holdable).
  const refuseHold = (result: Extract<ChainResult, { ok: false }>): Interception => ({
    intercepted: true,
    kind: "event",
    reason: `${result.gate}: ${result.interception.reason} (held for human approval, but tool calls cannot wait for approval, so it is refused)`,
  });

  approvals?.setDispatcher(async (proposal) => {
    const result = await chain.run(proposal, { ...contextOf(proposal, "dispatch"), approvedProposalId: proposal.id });
    if (!result.ok) {
      options.onBlocked?.(proposal, result);
      return { delivered: false, reason: `${result.gate}: ${result.interception.reason}` };
    }
    await inner.deliver(result.proposal);
    return { delivered: true, proposal: result.proposal };
  });

  const outlet: GatedOutlet = {
    chain,
    inner,
    async review(proposal, review) {
      // The soul passes the perception this proposal answers, so perception triggers can fire.
      const context = contextOf(proposal, "review");
      const result = await chain.run(proposal, review?.perception ? { perception: review.perception, ...context } : context);
      if (result.ok) return result.proposal;
      if (result.decision === "hold") return review?.holdable === false ? refuseHold(result) : holdFor(result);
      return { intercepted: true, kind: result.interception.kind, reason: `${result.gate}: ${result.interception.reason}` };
    },
    async deliver(proposal) {
      const result = await chain.run(proposal, contextOf(proposal, "dispatch"));
      if (!result.ok) {
        options.onBlocked?.(proposal, result);
        // A gate that could not decide may decide next time: throwing leaves the proposal in
        // the outbox for the next activation. Nothing is delivered either way.
        if (result.decision === "error" || result.decision === "timeout") {
          throw new GateDispatchError(proposal.id, `${result.gate}: ${result.interception.reason}`);
        }
        // A decision: acknowledged and dropped (or held), so the outbox does not retry it.
        if (result.decision === "hold" && approvals) await approvals.hold(result.proposal, { gate: result.gate, reason: result.interception.reason });
        return;
      }
      await inner.deliver(result.proposal);
    },
  };
  if (options.streamChunks && inner.chunk) {
    const forward = inner.chunk.bind(inner);
    const stream = new VerifiedStream({ chain, forward, context: (p) => contextOf(p, "stream") });
    outlet.chunk = (soulId, proposalId, text) => stream.chunk(soulId, proposalId, text);
    // The review starts once the utterance is whole: no piece of it is streamed after that.
    const review = outlet.review.bind(outlet);
    outlet.review = (proposal, context) => (stream.end(proposal.id), review(proposal, context));
  }
  return outlet;
}
