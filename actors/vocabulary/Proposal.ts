/**
 * Everything a soul does to the world leaves it as a Proposal: the LLM only proposes, and a
 * proposal reaches the world only after review (the gate chain) and after the turn that made
 * it has committed. Ids are stable (turn id + sequence), so a re-delivery after a crash can
 * be recognised by whoever receives it.
 */
export type ProposalKind = "speak" | "dispatch" | "log";

export interface Proposal {
  /** `${turnId}:${seq}`: the same on every delivery of this proposal. */
  id: string;
  soulId: string;
  /** `${soulId}:${turn}` for a turn, with `:sub` for the subprocess phase after it. */
  turnId: string;
  /** Order of the action within its turn, from 0. */
  seq: number;
  kind: ProposalKind;
  content: string;
  /** For `dispatch`: the action's name (Open Souls `dispatch({ action, content })`). */
  action?: string;
  /** The perception this turn answered: replies go back where it came from. */
  causation?: string;
  /** The answered perception's bridge detail (channel, thread), passed through untouched. */
  meta?: Record<string, unknown>;
  /** Extra fields of a dispatched action. */
  data?: Record<string, unknown>;
  /** Epoch milliseconds when the action was taken. */
  ts: number;
}

/** A gate's verdict that stops a proposal: it becomes a log line or a soul event instead. */
export interface Interception {
  intercepted: true;
  kind: "log" | "event";
  reason: string;
}

export type ReviewVerdict = Proposal | Interception;

export function isInterception(verdict: ReviewVerdict): verdict is Interception {
  return (verdict as Interception).intercepted === true;
}
