import { describe, expect, it } from "vitest";
import {
  approvalGate,
  bouncer,
  createApprovals,
  createGateChain,
  gatedOutlet,
  intercept,
  isGateIntercept,
  type Gate,
  type GateDecision,
  type HeldProposal,
} from "../../../actors/gate/index.ts";
import type { Outlet } from "../../../actors/vocabulary/outlet.ts";
import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import type { Store } from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";
import { proposal } from "./support.ts";

const stores = tempStores();

/** An approval queue behind a gated outlet, as a node would wire it. */
function wire(store: Store, extraGates: Gate[] = [], inner?: Outlet) {
  const decisions: GateDecision[] = [];
  const delivered: Proposal[] = [];
  const innerOutlet: Outlet = inner ?? { deliver: (p) => void delivered.push(p) };
  const approvals = createApprovals({
    kv: store.kv<HeldProposal>("node-1", "gate-approvals"),
    authorizedUsers: ["alice", "bob"],
    onDecision: (d) => decisions.push(d),
  });
  const chain = createGateChain([bouncer({ allowlist: ["search"] }), ...extraGates], { onDecision: (d) => decisions.push(d) });
  const outlet = gatedOutlet(innerOutlet, chain, { approvals });
  return { approvals, outlet, decisions, delivered };
}

const toolCall = (tool = "delete_all") => proposal({ kind: "dispatch", action: "tool", content: "run it", data: { tool } });

describe("approval", () => {
  it("holds a tool call that is not allowlisted: intercepted for the soul, persisted, not delivered", async () => {
    const { approvals, outlet, delivered, decisions } = wire(stores.open({ noSync: true }));
    const p = toolCall();
    const verdict = await outlet.review(p);
    expect(isGateIntercept(verdict)).toBe(true);
    expect(isGateIntercept(verdict) && verdict.reason).toContain("held for human approval");
    expect(approvals.pending().map((h) => [h.proposal.id, h.gate, h.status])).toEqual([[p.id, "bouncer", "pending"]]);
    expect(delivered).toEqual([]);
    expect(decisions.map((d) => d.decision)).toEqual(["hold"]);
    // An allowlisted tool is not held.
    const ok = toolCall("search");
    expect(await outlet.review(ok)).toEqual(ok);
  });

  it("delivers a held proposal once when an authorised user approves it", async () => {
    const { approvals, outlet, delivered, decisions } = wire(stores.open({ noSync: true }));
    const p = toolCall();
    await outlet.review(p);
    const [first, concurrent] = await Promise.all([
      approvals.handlePerception({ action: "approve", content: p.id, name: "alice" }),
      approvals.handlePerception({ action: "approve", content: ` ${p.id} `, name: "bob" }),
    ]);
    expect(first).toMatchObject({ consumed: true, outcome: "approved", proposalId: p.id });
    expect(concurrent).toMatchObject({ consumed: true, outcome: "unknown" });
    const again = await approvals.handlePerception({ action: "approve", content: p.id, name: "alice" });
    expect(again).toMatchObject({ consumed: true, outcome: "unknown", reason: `no proposal ${p.id} is waiting for approval` });
    expect(delivered.map((d) => d.id)).toEqual([p.id]);
    expect(approvals.pending()).toEqual([]);
    expect(decisions.filter((d) => d.gate === "approval").map((d) => [d.decision, d.reason])).toEqual([["approved", 'approved by "alice"']]);
  });

  it("drops a held proposal when an authorised user denies it", async () => {
    const { approvals, outlet, delivered, decisions } = wire(stores.open({ noSync: true }));
    const p = toolCall();
    await outlet.review(p);
    expect(await approvals.handlePerception({ action: "deny", content: p.id, name: "bob" })).toMatchObject({ consumed: true, outcome: "denied" });
    expect(await approvals.approve(p.id, "alice")).toMatchObject({ outcome: "unknown" });
    expect(delivered).toEqual([]);
    expect(approvals.pending()).toEqual([]);
    expect(decisions.at(-1)).toMatchObject({ gate: "approval", decision: "denied", proposalId: p.id, reason: 'denied by "bob"' });
  });

  it("refuses an approval from an unauthorised user, records why, and keeps the proposal waiting", async () => {
    const { approvals, outlet, delivered, decisions } = wire(stores.open({ noSync: true }));
    const p = toolCall();
    await outlet.review(p);
    const result = await approvals.handlePerception({ action: "approve", content: p.id, name: "mallory" });
    expect(result).toMatchObject({ consumed: true, outcome: "refused", reason: '"mallory" is not authorised to approve held proposals' });
    expect(await approvals.deny(p.id, "mallory")).toMatchObject({ outcome: "refused" });
    expect(delivered).toEqual([]);
    const held = approvals.get(p.id);
    expect(held?.status).toBe("pending");
    expect(held?.refusals.map((r) => [r.name, r.action])).toEqual([
      ["mallory", "approve"],
      ["mallory", "deny"],
    ]);
    expect(decisions.filter((d) => d.decision === "refused")).toHaveLength(2);
  });

  it("does not consume perceptions that are not approvals", async () => {
    const { approvals } = wire(stores.open({ noSync: true }));
    expect(await approvals.handlePerception({ action: "said", content: "approve it please", name: "alice" })).toEqual({ consumed: false });
    expect(await approvals.handlePerception({ action: "approve", content: "  ", name: "alice" })).toMatchObject({ consumed: true, outcome: "unknown" });
  });

  it("keeps a held proposal across a restart (reopened LMDB) and delivers it when approved then", async () => {
    const first = stores.open({ noSync: true });
    const before = wire(first);
    const p = toolCall();
    await before.outlet.review(p);
    await first.close();

    const reopened = stores.open({ noSync: true });
    const after = wire(reopened);
    expect(after.approvals.pending().map((h) => h.proposal)).toEqual([p]);
    expect(await after.approvals.handlePerception({ action: "approve", content: p.id, name: "alice" })).toMatchObject({ outcome: "approved" });
    expect(after.delivered).toEqual([p]);
    expect(before.delivered).toEqual([]);
  });

  it("re-verifies an approved proposal at dispatch: one that fails now is dropped, not delivered", async () => {
    let closed = false;
    const curfew: Gate = { name: "curfew", priority: 5, verify: (p) => (closed ? intercept("after hours") : p) };
    const { approvals, outlet, delivered, decisions } = wire(stores.open({ noSync: true }), [curfew]);
    const p = toolCall();
    await outlet.review(p);
    closed = true;
    expect(await approvals.approve(p.id, "alice")).toMatchObject({ outcome: "blocked", reason: "curfew: after hours" });
    expect(delivered).toEqual([]);
    expect(approvals.pending()).toEqual([]);
    expect(decisions.at(-1)).toMatchObject({ gate: "curfew", decision: "intercept", phase: "dispatch" });
  });

  it("keeps an approved proposal whose delivery failed, and delivers it on resume", async () => {
    let down = true;
    const delivered: Proposal[] = [];
    const flaky: Outlet = {
      deliver(p) {
        if (down) throw new Error("platform down");
        delivered.push(p);
      },
    };
    const store = stores.open({ noSync: true });
    const { approvals, outlet } = wire(store, [], flaky);
    const p = toolCall();
    await outlet.review(p);
    expect(await approvals.approve(p.id, "alice")).toMatchObject({ outcome: "failed" });
    expect(approvals.get(p.id)).toMatchObject({ status: "approved", approvedBy: "alice" });
    down = false;
    expect(await approvals.resume()).toMatchObject([{ outcome: "approved", proposalId: p.id }]);
    expect(delivered.map((d) => d.id)).toEqual([p.id]);
    expect(await approvals.resume()).toEqual([]);
  });

  it("approvalGate holds what it requires until that proposal is approved", async () => {
    const gate = approvalGate({ requires: (p) => p.kind === "dispatch" && p.action === "email" });
    const email = proposal({ kind: "dispatch", action: "email", content: "to: boss" });
    expect(gate.verify(email, {})).toMatchObject({ intercepted: true, hold: true, reason: "needs human approval" });
    expect(gate.verify(email, { approvedProposalId: email.id })).toBe(email);
    const speech = proposal();
    expect(gate.verify(speech, {})).toBe(speech);
  });

  it("blocks a hold when no approval queue is configured", async () => {
    const outlet = gatedOutlet({ deliver: () => undefined }, createGateChain([bouncer()]));
    const verdict = await outlet.review(toolCall());
    expect(isGateIntercept(verdict) && verdict.reason).toContain("no approval queue is configured");
  });
});
