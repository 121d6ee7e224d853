import { decodeEnvelope, makeEnvelope, type Envelope, type VerdictBody } from "../../runtime/bus/index.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { GateError, GateTimeoutError, MalformedVerdictError } from "./errors.ts";
import type { GateVerdict } from "./Gate.ts";
import type { GateOutcome } from "./gateChain.ts";
import { parseProposal, withIdentityOf } from "./proposalSchema.ts";

/**
 * The gate request/reply on the wire (docs/PROTOCOL.md §6): a `proposal` envelope whose
 * body is the proposal, answered by a `verdict` envelope whose `causation` is the request's
 * id and whose body is `{ verdict: "pass" | "transform" | "intercept", proposal?, reason? }`.
 * An intercept may carry `kind` (log | event), `hold: true` (wait for a human), or
 * `error: true` / `timeout: true` (the gate could not decide).
 */

/** Who a verdict comes from: the skill gate's address. */
export function gateAddress(skill: string): string {
  return `gate.${skill}`;
}

export function proposalEnvelope(proposal: Proposal, skill: string): Envelope<"proposal"> {
  return makeEnvelope("proposal", proposal.soulId || "ensoul", gateAddress(skill), { ...proposal }, { trace: proposal.turnId || undefined });
}

/** The verdict body a skill-gate actor sends for a gate outcome (a skip passes). */
export function verdictBody(outcome: GateOutcome): VerdictBody {
  switch (outcome.decision) {
    case "skip":
    case "pass":
      return { verdict: "pass" };
    case "transform":
      return { verdict: "transform", proposal: { ...outcome.proposal }, reason: outcome.reason };
    case "intercept":
      return { verdict: "intercept", kind: outcome.interception.kind, reason: outcome.reason };
    case "hold":
      return { verdict: "intercept", kind: "event", reason: outcome.reason, hold: true };
    case "error":
      return { verdict: "intercept", kind: "event", reason: outcome.reason, error: true };
    case "timeout":
      return { verdict: "intercept", kind: "event", reason: outcome.reason, error: true, timeout: true };
  }
}

/** The clear answer to a request that cannot be served: an intercept flagged as an error. */
export function errorVerdictBody(reason: string): VerdictBody {
  return { verdict: "intercept", kind: "event", reason, error: true };
}

/**
 * Reads a skill-gate actor's reply into a gate verdict. Anything other than a well-formed
 * verdict that answers this request throws (MalformedVerdictError), and an error verdict
 * throws too, so the chain records an error or a timeout and blocks.
 */
export function readVerdict(bytes: Uint8Array, request: { id: string; proposal: Proposal }, skill: string, timeoutMs: number): GateVerdict {
  const where = `skill gate ${skill}`;
  const decoded = decodeEnvelope(bytes);
  if (!decoded.ok) throw new MalformedVerdictError(skill, `malformed verdict from ${where}: ${decoded.reason}`);
  const env = decoded.envelope;
  if (env.kind !== "verdict") throw new MalformedVerdictError(skill, `malformed verdict from ${where}: a ${env.kind} envelope instead of a verdict`);
  if (env.causation !== request.id) throw new MalformedVerdictError(skill, `malformed verdict from ${where}: it answers ${JSON.stringify(env.causation ?? null)}, not this request`);
  const body = env.body as Record<string, unknown>;
  switch (env.body.verdict) {
    case "pass":
      return request.proposal;
    case "transform": {
      const parsed = parseProposal(body.proposal);
      if (!parsed.ok) throw new MalformedVerdictError(skill, `malformed verdict from ${where}: transform without a valid proposal (${parsed.reason})`);
      return withIdentityOf(request.proposal, parsed.proposal);
    }
    case "intercept": {
      const reason = typeof body.reason === "string" ? body.reason.trim() : "";
      if (!reason) throw new MalformedVerdictError(skill, `malformed verdict from ${where}: intercept without a reason`);
      if (body.timeout === true) throw new GateTimeoutError(skill, timeoutMs, `${where} timed out: ${reason}`);
      if (body.error === true) throw new GateError(skill, `${where} could not decide: ${reason}`);
      const kind = body.kind === "log" ? "log" : "event";
      return { intercepted: true, kind, reason, ...(body.hold === true ? { hold: true } : {}) };
    }
  }
}
