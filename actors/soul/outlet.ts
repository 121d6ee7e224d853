import type { Proposal, ReviewVerdict } from "./Proposal.ts";

/**
 * Where proposals leave the soul. The gate chain plugs into `review`; a bus or a bridge
 * plugs into `chunk` and `deliver`. `deliver` runs only after the turn has committed, and
 * again after a crash for anything not yet acknowledged, so it must tolerate a repeat of
 * the same proposal id.
 */
export interface Outlet {
  /** Pass, transform or intercept a proposal before it is committed. Throwing blocks it (fail closed). */
  review?(proposal: Proposal): ReviewVerdict | Promise<ReviewVerdict>;
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
