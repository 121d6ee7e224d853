/**
 * Streaming behind the gates: a gated soul's speech is shown while it is produced, but only
 * in pieces the gate chain has passed. Each piece ends at a sentence end or a line break (or,
 * in a long run-on, at a space once `maxPiece` characters wait); the chain checks the whole
 * text so far, phase `stream`, and only when it passes unchanged is the new piece forwarded.
 * An interception, a hold, a transform (the gates want other words than were streamed), an
 * error or a timeout stops that utterance's stream there: nothing past the last verified
 * piece is ever shown, and the final, reviewed as always, says the rest (or nothing).
 *
 * Why the whole text so far and not each piece alone: a secret split across two pieces is
 * only visible to a gate that sees both.
 */
import type { Proposal } from "../vocabulary/index.ts";
import type { GateChain } from "./gateChain.ts";
import type { GateContext } from "./Gate.ts";

/** Characters a piece may run to without a sentence end before it is cut at a space. */
export const DEFAULT_MAX_PIECE = 240;
/** Utterances streamed at once before the oldest is forgotten (one that is never finalised). */
const STREAMS_KEPT = 1_000;

interface PieceStream {
  soulId: string;
  text: string;
  /** Characters already released. */
  released: number;
  checking: boolean;
  stopped: boolean;
}

const SENTENCE_END = /[.!?…。！？]["'”’)\]]*\s+|\n+/g;

/** Where the next releasable piece ends (an index into `text`), or -1 when none is ready. */
export function pieceEnd(text: string, from: number, maxPiece: number): number {
  let end = -1;
  SENTENCE_END.lastIndex = from;
  for (let m = SENTENCE_END.exec(text); m; m = SENTENCE_END.exec(text)) end = m.index + m[0].length;
  if (end > from) return end;
  if (text.length - from < maxPiece) return -1;
  const space = text.lastIndexOf(" ", from + maxPiece);
  return space > from ? space + 1 : from + maxPiece;
}

export interface VerifiedStreamOptions {
  chain: GateChain;
  /** Forwards a verified piece (the inner outlet's `chunk`). */
  forward(soulId: string, proposalId: string, piece: string): void;
  context?: (proposal: Proposal) => GateContext;
  maxPiece?: number;
}

export class VerifiedStream {
  readonly #streams = new Map<string, PieceStream>();
  readonly #maxPiece: number;

  constructor(private readonly o: VerifiedStreamOptions) {
    this.#maxPiece = o.maxPiece ?? DEFAULT_MAX_PIECE;
  }

  chunk(soulId: string, proposalId: string, text: string): void {
    let s = this.#streams.get(proposalId);
    if (!s) {
      s = { soulId, text: "", released: 0, checking: false, stopped: false };
      this.#streams.set(proposalId, s);
      if (this.#streams.size > STREAMS_KEPT) this.#streams.delete(this.#streams.keys().next().value as string);
    }
    if (s.stopped) return;
    s.text += text;
    this.#pump(proposalId, s);
  }

  /** The utterance is complete (its review begins): nothing more of it is streamed. */
  end(proposalId: string): void {
    const s = this.#streams.get(proposalId);
    if (s) s.stopped = true;
    this.#streams.delete(proposalId);
  }

  #pump(proposalId: string, s: PieceStream): void {
    if (s.checking || s.stopped) return;
    const end = pieceEnd(s.text, s.released, this.#maxPiece);
    if (end < 0) return;
    const candidate = s.text.slice(0, end);
    s.checking = true;
    const proposal = pieceProposal(s.soulId, proposalId, candidate);
    this.o.chain
      .run(proposal, { soulId: s.soulId, ...this.o.context?.(proposal), phase: "stream" })
      .then((result) => {
        if (s.stopped) return;
        if (!result.ok || result.proposal.content !== candidate || result.proposal.kind !== "speak") {
          s.stopped = true;
          return;
        }
        const piece = candidate.slice(s.released);
        s.released = end;
        this.o.forward(s.soulId, proposalId, piece);
      })
      .catch(() => {
        s.stopped = true;
      })
      .finally(() => {
        s.checking = false;
        this.#pump(proposalId, s);
      });
  }
}

/** The proposal a piece is checked as: the speech so far, under the id the final will have. */
function pieceProposal(soulId: string, proposalId: string, content: string): Proposal {
  const cut = proposalId.lastIndexOf(":");
  const seq = Number(proposalId.slice(cut + 1));
  return { id: proposalId, soulId, turnId: cut > 0 ? proposalId.slice(0, cut) : proposalId, seq: Number.isSafeInteger(seq) ? seq : 0, kind: "speak", content, ts: Date.now() };
}
