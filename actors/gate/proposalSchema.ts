import { z } from "zod";
import type { Proposal } from "../vocabulary/index.ts";

/**
 * The shape a proposal must have to pass through a gate: what a local gate returns and what
 * a skill-gate actor receives or sends back are checked against it, because either may be
 * wrong (a buggy gate, another language's client) and a wrong one must block, not leak.
 */
export const proposalSchema = z.object({
  id: z.string().min(1).max(256),
  soulId: z.string().min(1).max(256),
  turnId: z.string().min(1).max(256),
  seq: z.number().int().nonnegative(),
  kind: z.enum(["speak", "dispatch", "log"]),
  content: z.string(),
  action: z.string().max(256).optional(),
  causation: z.string().max(256).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  ts: z.number().finite(),
});

const OPTIONAL = ["action", "causation", "meta", "data"] as const;

export type ParsedProposal = { ok: true; proposal: Proposal } | { ok: false; reason: string };

/** Validates an untrusted value as a Proposal; nil optional fields (other msgpack writers) count as absent. */
export function parseProposal(value: unknown): ParsedProposal {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, reason: "proposal must be a map" };
  const candidate: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of OPTIONAL) if (candidate[key] === null) delete candidate[key];
  const parsed = proposalSchema.safeParse(candidate);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 4)
      .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
      .join("; ");
    return { ok: false, reason: `invalid proposal: ${issues}` };
  }
  const p = parsed.data;
  const proposal: Proposal = { id: p.id, soulId: p.soulId, turnId: p.turnId, seq: p.seq, kind: p.kind, content: p.content, ts: p.ts };
  if (p.action !== undefined) proposal.action = p.action;
  if (p.causation !== undefined) proposal.causation = p.causation;
  if (p.meta !== undefined) proposal.meta = p.meta;
  if (p.data !== undefined) proposal.data = p.data;
  return { ok: true, proposal };
}

/** A gate may change what is proposed, never which proposal it is. */
export function withIdentityOf(original: Proposal, changed: Proposal): Proposal {
  return { ...changed, id: original.id, soulId: original.soulId, turnId: original.turnId, seq: original.seq };
}

/** The fields two proposals differ in (deep comparison of plain values). */
export function changedFields(a: Proposal, b: Proposal): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const changed: string[] = [];
  for (const key of keys) {
    if (!deepEqual((a as unknown as Record<string, unknown>)[key], (b as unknown as Record<string, unknown>)[key])) changed.push(key);
  }
  return changed.sort();
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array && b instanceof Uint8Array) || a.length !== b.length) return false;
    return a.every((byte, i) => byte === b[i]);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual(ra[k], rb[k]));
}
