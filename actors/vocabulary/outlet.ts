import type { Perception } from "./Perception.ts";
import type { Proposal, ReviewVerdict } from "./Proposal.ts";

/** What a review sees besides the proposal itself. */
export interface ReviewContext {
  /**
   * The perception the proposal answers: the one the turn (or, for a subprocess's proposal,
   * the turn the subprocess followed) was run for. `proposal.causation` is its id.
   * Optional so that a caller outside a soul's turn (a re-verification at dispatch) can
   * review without one.
   */
  perception?: Perception;
  /**
   * `false` for a proposal that cannot wait for a human: a tool call, which its turn needs
   * answered now and which is only reviewed, never delivered. A gate that holds it refuses it
   * at once instead of queueing it for approval: by the time a human looked the turn would
   * have moved on, and an approval would deliver the call to the outlet as a dispatch.
   */
  holdable?: false;
}

/**
 * Where proposals leave the soul. The gate chain plugs into `review`; a bus or a bridge
 * plugs into `chunk` and `deliver`. `deliver` runs only after the turn has committed, and
 * again after a crash for anything not yet acknowledged, so it must tolerate a repeat of
 * the same proposal id.
 */
export interface Outlet {
  /**
   * Pass, transform or intercept a proposal before it is committed. Throwing blocks it (fail
   * closed). The soul runtime passes the perception the proposal answers as `context`, so a
   * gate can judge a reply by what it replies to; an outlet that wraps another should pass
   * `context` on.
   */
  review?(proposal: Proposal, context?: ReviewContext): ReviewVerdict | Promise<ReviewVerdict>;
  /** A live piece of streamed speech, before the turn commits; the final text follows via `deliver`. */
  chunk?(soulId: string, proposalId: string, text: string): void;
  deliver(proposal: Proposal): void | Promise<void>;
}

export type ProposalListener = (proposal: Proposal) => void;
export type ChunkListener = (chunk: { soulId: string; proposalId: string; text: string }) => void;

/** The default outlet: in-process listeners, for tests, the terminal and single-process hosts. */
export interface InProcessOutlet extends Outlet {
  onProposal(listener: ProposalListener): () => void;
  onChunk(listener: ChunkListener): () => void;
}

export function createInProcessOutlet(): InProcessOutlet {
  const proposals = new Set<ProposalListener>();
  const chunks = new Set<ChunkListener>();
  return {
    chunk(soulId, proposalId, text) {
      for (const listener of chunks) listener({ soulId, proposalId, text });
    },
    deliver(proposal) {
      for (const listener of proposals) listener(proposal);
    },
    onProposal(listener) {
      proposals.add(listener);
      return () => proposals.delete(listener);
    },
    onChunk(listener) {
      chunks.add(listener);
      return () => chunks.delete(listener);
    },
  };
}
