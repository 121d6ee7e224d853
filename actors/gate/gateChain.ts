import type { Proposal, ReviewVerdict } from "../vocabulary/index.ts";
import { errorMessage, GateError, GateTimeoutError } from "./errors.ts";
import { isGateIntercept, type DecisionKind, type DecisionListener, type Gate, type GateContext, type GateDecision, type GateIntercept } from "./Gate.ts";
import { changedFields, parseProposal, withIdentityOf } from "./proposalSchema.ts";

/** Gates are deterministic code; five seconds is already generous for one. */
export const DEFAULT_GATE_TIMEOUT_MS = 5_000;

/** What one gate did with one proposal. `skip`: its trigger did not match. */
export type GateOutcome =
  | { decision: "skip" }
  | { decision: "pass"; proposal: Proposal }
  | { decision: "transform"; proposal: Proposal; reason: string }
  | { decision: "intercept" | "hold" | "error" | "timeout"; interception: GateIntercept; reason: string };

export type BlockingDecision = "intercept" | "hold" | "error" | "timeout";

export type ChainResult =
  | { ok: true; proposal: Proposal; decisions: GateDecision[] }
  | {
      ok: false;
      /** The proposal as it reached the gate that stopped it (earlier transforms applied). */
      proposal: Proposal;
      gate: string;
      decision: BlockingDecision;
      interception: GateIntercept;
      decisions: GateDecision[];
    };

export interface GateChainOptions {
  /** Deadline for a gate that sets none of its own (default 5 s). */
  timeoutMs?: number;
  /** Called for every decision, in order; a listener that throws is ignored. */
  onDecision?: DecisionListener | readonly DecisionListener[];
  now?: () => number;
}

export interface GateChain {
  /** Highest priority first; equal priorities keep the order they were given in. */
  readonly gates: readonly Gate[];
  run(proposal: Proposal, ctx?: GateContext): Promise<ChainResult>;
}

/**
 * The deliberate engine: every gate whose trigger matches, highest priority first, each
 * seeing what the previous one let through. The first interception stops the chain. A gate
 * that throws, answers garbage or misses its deadline blocks the proposal: gates fail closed.
 */
export function createGateChain(gates: readonly Gate[], options: GateChainOptions = {}): GateChain {
  gates.forEach(assertGate);
  const sorted = gates
    .map((gate, index) => ({ gate, index }))
    .sort((a, b) => b.gate.priority - a.gate.priority || a.index - b.index)
    .map(({ gate }) => gate);
  const timeoutMs = options.timeoutMs ?? DEFAULT_GATE_TIMEOUT_MS;
  const listeners = options.onDecision === undefined ? [] : Array.isArray(options.onDecision) ? [...options.onDecision] : [options.onDecision as DecisionListener];
  const now = options.now ?? Date.now;

  return {
    gates: sorted,
    async run(proposal, ctx = {}) {
      const decisions: GateDecision[] = [];
      let current = proposal;
      for (const gate of sorted) {
        const outcome = await evaluateGate(gate, current, ctx, timeoutMs);
        if (outcome.decision === "skip") continue;
        const decision: GateDecision = {
          gate: gate.name,
          proposalId: proposal.id,
          soulId: proposal.soulId,
          decision: outcome.decision,
          ts: now(),
          ...("reason" in outcome ? { reason: outcome.reason } : {}),
          ...(ctx.phase ? { phase: ctx.phase } : {}),
        };
        decisions.push(decision);
        notify(listeners, decision);
        if (outcome.decision === "pass" || outcome.decision === "transform") {
          current = outcome.proposal;
          continue;
        }
        return { ok: false, proposal: current, gate: gate.name, decision: outcome.decision, interception: outcome.interception, decisions };
      }
      return { ok: true, proposal: current, decisions };
    },
  };
}

/** The soul's view of a chain result: the proposal to commit, or why it was stopped. */
export function chainVerdict(result: ChainResult): ReviewVerdict {
  if (result.ok) return result.proposal;
  return { intercepted: true, kind: result.interception.kind, reason: `${result.gate}: ${result.interception.reason}` };
}

/**
 * Runs one gate on one proposal: trigger, verify under a deadline, and a check of what came
 * back. Never throws; every failure is an outcome that blocks. Shared by the chain and the
 * skill-gate actor, so a gate behaves the same in-process and on the bus.
 */
export async function evaluateGate(gate: Gate, proposal: Proposal, ctx: GateContext, defaultTimeoutMs: number): Promise<GateOutcome> {
  // Each gate gets its own copy: one that edits in place is then seen as the transform it is,
  // and cannot change what the caller (or the next gate) holds behind the chain's back.
  let copy: Proposal;
  try {
    copy = structuredClone(proposal);
  } catch (err) {
    return blocked("error", `proposal ${proposal.id} is not plain data: ${errorMessage(err)}`);
  }
  if (gate.trigger) {
    let matched: unknown;
    try {
      matched = gate.trigger(ctx, copy);
    } catch (err) {
      return blocked("error", `trigger of gate ${gate.name} failed: ${errorMessage(err)}`);
    }
    if (!matched) return { decision: "skip" };
  }
  const limit = gate.timeoutMs ?? defaultTimeoutMs;
  let verdict: unknown;
  try {
    verdict = await withDeadline(gate.name, limit, (signal) => gate.verify(copy, { ...ctx, signal }));
  } catch (err) {
    if (err instanceof GateTimeoutError) return blocked("timeout", err.message);
    // Already names the gate and says what went wrong (a malformed or error verdict from a skill gate).
    if (err instanceof GateError) return blocked("error", err.message);
    return blocked("error", `gate ${gate.name} failed: ${errorMessage(err)}`);
  }
  if (isGateIntercept(verdict)) {
    if (typeof verdict.reason !== "string" || verdict.reason.trim() === "") return blocked("error", `gate ${gate.name} intercepted without a reason`);
    if (verdict.kind !== "log" && verdict.kind !== "event") return blocked("error", `gate ${gate.name} intercepted with an unknown kind`);
    const interception: GateIntercept = { intercepted: true, kind: verdict.kind, reason: verdict.reason, ...(verdict.hold === true ? { hold: true } : {}) };
    return { decision: verdict.hold === true ? "hold" : "intercept", interception, reason: verdict.reason };
  }
  const parsed = parseProposal(verdict);
  if (!parsed.ok) return blocked("error", `gate ${gate.name} returned a malformed verdict: ${parsed.reason}`);
  const next = withIdentityOf(proposal, parsed.proposal);
  const changed = changedFields(proposal, next);
  if (changed.length === 0) return { decision: "pass", proposal };
  return { decision: "transform", proposal: next, reason: `changed ${changed.join(", ")}` };
}

function blocked(decision: "error" | "timeout", reason: string): GateOutcome {
  return { decision, interception: { intercepted: true, kind: "event", reason }, reason };
}

/** Races the gate against its deadline; aborts its signal when the deadline wins. */
async function withDeadline<T>(gate: string, ms: number, run: (signal: AbortSignal) => T | Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new GateTimeoutError(gate, ms);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    // Inside a promise chain so that a synchronous throw is a rejection, not an escape.
    return await Promise.race([Promise.resolve().then(() => run(controller.signal)), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function notify(listeners: readonly DecisionListener[], decision: GateDecision): void {
  for (const listener of listeners) {
    try {
      listener({ ...decision });
    } catch {
      // Recording a decision must never change it.
    }
  }
}

function assertGate(gate: Gate, index: number): void {
  const where = `gate #${index}${typeof gate?.name === "string" ? ` (${gate.name})` : ""}`;
  if (typeof gate !== "object" || gate === null) throw new TypeError(`${where} is not an object`);
  if (typeof gate.name !== "string" || gate.name.length === 0) throw new TypeError(`${where} needs a non-empty name`);
  if (typeof gate.priority !== "number" || !Number.isFinite(gate.priority)) throw new TypeError(`${where} needs a finite numeric priority`);
  if (typeof gate.verify !== "function") throw new TypeError(`${where} needs a verify function`);
  if (gate.trigger !== undefined && typeof gate.trigger !== "function") throw new TypeError(`${where}: trigger must be a function`);
  if (gate.timeoutMs !== undefined && !(gate.timeoutMs > 0)) throw new TypeError(`${where}: timeoutMs must be positive`);
}
