import type { Interception, Proposal } from "../vocabulary/index.ts";

/**
 * What a gate knows besides the proposal. Everything is optional: a chain run from a soul's
 * outlet knows little more than the phase, a reasoning step knows its attempt, an approval
 * knows which proposal a human let through.
 */
export interface GateContext {
  soulId?: string;
  /**
   * `review` before the turn commits; `dispatch` when a committed proposal is about to leave;
   * `stream` for speech streamed while it is produced (the text so far, verifiedStream.ts).
   */
  phase?: GatePhase;
  /** The perception the proposal answers, when the caller has it (Open Souls shape). */
  perception?: { action: string; content: string; name: string };
  /** The proposal came from a reasoning step, so an interception may be retried with feedback. */
  reasoning?: boolean;
  /** 1-based attempt number inside `proposeWithRetries`. */
  attempt?: number;
  /** A human approved this proposal id: the gate that held it lets it through once. */
  approvedProposalId?: string;
  /** Aborted when this gate's deadline passes; a gate doing I/O should stop then. */
  signal?: AbortSignal;
  /** Anything else a deployment wants its gates and triggers to see. */
  data?: Readonly<Record<string, unknown>>;
}

export type GatePhase = "review" | "dispatch" | "stream";

/**
 * An interception, as the soul knows it, plus `hold`: the proposal is stopped now but may
 * still go out once a human approves it.
 */
export interface GateIntercept extends Interception {
  hold?: boolean;
}

/** The proposal (unchanged or transformed) or an interception. */
export type GateVerdict = Proposal | GateIntercept;

/**
 * A skill gate: deterministic code that verifies, transforms or intercepts what the LLM
 * proposed. Gates run highest priority first, and only when their trigger matches.
 */
export interface Gate {
  readonly name: string;
  readonly priority: number;
  /** Absent: the gate always runs. A trigger that throws blocks the proposal (fail closed). */
  trigger?(ctx: GateContext, proposal: Proposal): boolean;
  verify(proposal: Proposal, ctx: GateContext): GateVerdict | Promise<GateVerdict>;
  /** This gate's deadline; the chain's default otherwise. */
  readonly timeoutMs?: number;
}

/** Every outcome a gate (or the approval queue) can record for a proposal. */
export const DECISION_KINDS = ["pass", "transform", "intercept", "hold", "error", "timeout", "approved", "denied", "refused"] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

export interface GateDecision {
  gate: string;
  proposalId: string;
  soulId: string;
  decision: DecisionKind;
  reason?: string;
  phase?: GatePhase;
  /** Epoch ms. */
  ts: number;
}

export type DecisionListener = (decision: GateDecision) => void;

/** A verdict that stops the proposal; `kind` says whether it becomes a log line or a soul event. */
export function intercept(reason: string, kind: "log" | "event" = "event"): GateIntercept {
  return { intercepted: true, kind, reason };
}

/** Stops the proposal until a human approves or denies it. */
export function hold(reason: string): GateIntercept {
  return { intercepted: true, kind: "event", reason, hold: true };
}

export function isGateIntercept(verdict: unknown): verdict is GateIntercept {
  return typeof verdict === "object" && verdict !== null && (verdict as GateIntercept).intercepted === true;
}
