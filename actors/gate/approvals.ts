import type { KvNamespace } from "../../runtime/store/index.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { errorMessage } from "./errors.ts";
import { hold, type DecisionListener, type Gate, type GateContext, type GateDecision } from "./Gate.ts";

/** A proposal waiting for a human, as stored (msgpack in LMDB, one key per proposal id). */
export interface HeldProposal {
  proposal: Proposal;
  /** The gate that held it, and why. */
  gate: string;
  reason: string;
  heldAt: number;
  /** `approved`: a human said yes but delivery has not finished (it resumes after a restart). */
  status: "pending" | "approved";
  approvedBy?: string;
  approvedAt?: number;
  /** Attempts by people who may not decide, newest last (the last 20). */
  refusals: ApprovalRefusal[];
}

export interface ApprovalRefusal {
  name: string;
  action: "approve" | "deny";
  reason: string;
  ts: number;
}

export type ApprovalOutcome =
  /** Approved and delivered. */
  | "approved"
  /** Denied and dropped. */
  | "denied"
  /** The sender may not decide. */
  | "refused"
  /** No such proposal is waiting (never held, or already decided). */
  | "unknown"
  /** Approved, but it failed re-verification at dispatch: dropped. */
  | "blocked"
  /** Approved, but delivery failed: kept, and retried by `resume()`. */
  | "failed";

export interface ApprovalResult {
  /** True when the perception was an approval command and must not go on to the soul. */
  consumed: boolean;
  outcome?: ApprovalOutcome;
  proposalId?: string;
  reason?: string;
  /** What was delivered (after re-verification), when it was. */
  delivered?: Proposal;
}

/** Delivers an approved proposal; the gated outlet re-verifies it first. */
export type ApprovalDispatcher = (proposal: Proposal) => Promise<{ delivered: true; proposal: Proposal } | { delivered: false; reason: string }>;

/** The fields of a perception an approval needs (Open Souls shape). */
export interface ApprovalPerception {
  action: string;
  /** The held proposal's id. */
  content: string;
  /** Who sent it. Trust comes from the bridge that set it (the platform's user identity). */
  name: string;
}

export interface ApprovalsOptions {
  /** Where held proposals live, e.g. `store.kv(nodeId, "gate-approvals")`. */
  kv: KvNamespace<HeldProposal>;
  /** Who may approve or deny: a list of names, or a predicate. */
  authorizedUsers: readonly string[] | ((name: string, perception: ApprovalPerception) => boolean);
  dispatch?: ApprovalDispatcher;
  onDecision?: DecisionListener | readonly DecisionListener[];
  now?: () => number;
}

export interface Approvals {
  /** Stores a proposal until a human decides; a proposal already held stays as it is. */
  hold(proposal: Proposal, why: { gate: string; reason: string }): Promise<HeldProposal>;
  get(proposalId: string): HeldProposal | undefined;
  /** Everything waiting, in id order. */
  pending(): HeldProposal[];
  approve(proposalId: string, user: string): Promise<ApprovalResult>;
  deny(proposalId: string, user: string, reason?: string): Promise<ApprovalResult>;
  /**
   * Routes an `approve`/`deny` perception (`content`: the proposal id, `name`: the user).
   * Any other perception is not consumed and goes on to the soul.
   */
  handlePerception(perception: ApprovalPerception): Promise<ApprovalResult>;
  /** Wires delivery (the gated outlet does this). */
  setDispatcher(dispatch: ApprovalDispatcher): void;
  /** Delivers proposals approved before a crash whose delivery had not finished. */
  resume(): Promise<ApprovalResult[]>;
}

const MAX_REFUSALS = 20;
export const APPROVAL_GATE = "approval";

/**
 * The approval queue: held proposals survive a restart (LMDB), wait for an authorised
 * human, and are then delivered once (through the dispatcher) or dropped. Refusals are
 * recorded with their reason, on the held record and as decisions.
 */
export function createApprovals(options: ApprovalsOptions): Approvals {
  const { kv } = options;
  const now = options.now ?? Date.now;
  const listeners = options.onDecision === undefined ? [] : Array.isArray(options.onDecision) ? [...options.onDecision] : [options.onDecision as DecisionListener];
  const authorized =
    typeof options.authorizedUsers === "function"
      ? options.authorizedUsers
      : ((users: ReadonlySet<string>) => (name: string) => users.has(name))(new Set(options.authorizedUsers));
  let dispatcher = options.dispatch;
  // One decision per proposal at a time: a double click must not deliver twice.
  const deciding = new Set<string>();

  const record = (held: HeldProposal, decision: GateDecision["decision"], reason: string) => {
    const d: GateDecision = { gate: APPROVAL_GATE, proposalId: held.proposal.id, soulId: held.proposal.soulId, decision, reason, phase: "dispatch", ts: now() };
    for (const listener of listeners) {
      try {
        listener({ ...d });
      } catch {
        // Recording a decision must never change it.
      }
    }
  };

  const refuse = async (proposalId: string, user: string, action: "approve" | "deny"): Promise<ApprovalResult> => {
    const reason = `${JSON.stringify(user)} is not authorised to ${action} held proposals`;
    const held = kv.get(proposalId);
    if (held) {
      const refusal: ApprovalRefusal = { name: user, action, reason, ts: now() };
      await kv.put(proposalId, { ...held, refusals: [...(held.refusals ?? []), refusal].slice(-MAX_REFUSALS) });
      record(held, "refused", reason);
    }
    return { consumed: true, outcome: "refused", proposalId, reason };
  };

  const deliver = async (held: HeldProposal): Promise<ApprovalResult> => {
    const id = held.proposal.id;
    if (!dispatcher) return { consumed: true, outcome: "failed", proposalId: id, reason: "approved, but nothing is wired to deliver it yet: it will be delivered by resume()" };
    let result: Awaited<ReturnType<ApprovalDispatcher>>;
    try {
      result = await dispatcher(held.proposal);
    } catch (err) {
      return { consumed: true, outcome: "failed", proposalId: id, reason: `approved, but delivery failed (kept for resume()): ${errorMessage(err)}` };
    }
    await kv.delete(id);
    if (!result.delivered) return { consumed: true, outcome: "blocked", proposalId: id, reason: result.reason };
    return { consumed: true, outcome: "approved", proposalId: id, delivered: result.proposal };
  };

  const exclusive = async (proposalId: string, work: (held: HeldProposal) => Promise<ApprovalResult>): Promise<ApprovalResult> => {
    if (deciding.has(proposalId)) return { consumed: true, outcome: "unknown", proposalId, reason: `proposal ${proposalId} is already being decided` };
    deciding.add(proposalId);
    try {
      const held = kv.get(proposalId);
      if (!held) return { consumed: true, outcome: "unknown", proposalId, reason: `no proposal ${proposalId} is waiting for approval` };
      return await work(held);
    } finally {
      deciding.delete(proposalId);
    }
  };

  const approvals: Approvals = {
    async hold(proposal, why) {
      const existing = kv.get(proposal.id);
      if (existing) return existing;
      const held: HeldProposal = { proposal, gate: why.gate, reason: why.reason, heldAt: now(), status: "pending", refusals: [] };
      await kv.put(proposal.id, held);
      return held;
    },
    get: (id) => kv.get(id),
    pending: () => kv.range().map((e) => e.value),
    async approve(proposalId, user) {
      if (!authorized(user, { action: "approve", content: proposalId, name: user })) return refuse(proposalId, user, "approve");
      return exclusive(proposalId, async (held) => {
        let approved = held;
        if (held.status !== "approved") {
          approved = { ...held, status: "approved", approvedBy: user, approvedAt: now() };
          // Durable before delivery: a crash in between resumes the delivery instead of asking again.
          await kv.put(proposalId, approved);
          record(approved, "approved", `approved by ${JSON.stringify(user)}`);
        }
        return deliver(approved);
      });
    },
    async deny(proposalId, user, reason) {
      if (!authorized(user, { action: "deny", content: proposalId, name: user })) return refuse(proposalId, user, "deny");
      return exclusive(proposalId, async (held) => {
        if (held.status === "approved") return { consumed: true, outcome: "unknown", proposalId, reason: `proposal ${proposalId} was already approved` };
        await kv.delete(proposalId);
        const why = `denied by ${JSON.stringify(user)}${reason ? `: ${reason}` : ""}`;
        record(held, "denied", why);
        return { consumed: true, outcome: "denied", proposalId, reason: why };
      });
    },
    async handlePerception(perception) {
      const action = typeof perception.action === "string" ? perception.action.trim().toLowerCase() : "";
      if (action !== "approve" && action !== "deny") return { consumed: false };
      const proposalId = typeof perception.content === "string" ? perception.content.trim() : "";
      const user = typeof perception.name === "string" ? perception.name : "";
      if (!proposalId) return { consumed: true, outcome: "unknown", reason: `an ${action} needs the proposal id as its content` };
      if (!authorized(user, perception)) return refuse(proposalId, user, action);
      return action === "approve" ? approvals.approve(proposalId, user) : approvals.deny(proposalId, user);
    },
    setDispatcher(dispatch) {
      dispatcher = dispatch;
    },
    async resume() {
      const results: ApprovalResult[] = [];
      for (const { value } of kv.range()) {
        if (value.status !== "approved") continue;
        results.push(await exclusive(value.proposal.id, deliver));
      }
      return results;
    },
  };
  return approvals;
}

export interface ApprovalGateOptions {
  name?: string;
  priority?: number;
  /** Which proposals need a human's approval. */
  requires: (proposal: Proposal, ctx: GateContext) => boolean;
  /** The hold reason (default: "needs human approval"). */
  reason?: string;
  trigger?: (ctx: GateContext, proposal: Proposal) => boolean;
}

/** Holds every proposal that `requires` picks until a human approves that very proposal. */
export function approvalGate(options: ApprovalGateOptions): Gate {
  return {
    name: options.name ?? APPROVAL_GATE,
    priority: options.priority ?? 80,
    ...(options.trigger ? { trigger: options.trigger } : {}),
    verify(proposal, ctx) {
      if (!options.requires(proposal, ctx) || ctx.approvedProposalId === proposal.id) return proposal;
      return hold(options.reason ?? "needs human approval");
    },
  };
}
