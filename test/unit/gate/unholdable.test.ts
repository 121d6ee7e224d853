/**
 * `ReviewContext.holdable: false` (how a tool call is reviewed): a hold refuses the proposal
 * at once instead of queueing it, so an approval can never deliver it. Other proposals are
 * still held as before.
 */
import { describe, expect, it } from "vitest";
import { approvalGate, bouncer, createApprovals, createGateChain, gatedOutlet, isGateIntercept, type HeldProposal } from "../../../actors/gate/index.ts";
import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import { tempStores } from "../../support/store/tempStore.ts";
import { proposal } from "./support.ts";

const stores = tempStores();

function wire() {
  const delivered: Proposal[] = [];
  const approvals = createApprovals({ kv: stores.open({ noSync: true }).kv<HeldProposal>("node-1", "gate-approvals"), authorizedUsers: ["alice"] });
  const chain = createGateChain([bouncer({ allowlist: ["search"] }), approvalGate({ requires: (p) => p.kind === "speak" })]);
  const outlet = gatedOutlet({ deliver: (p) => void delivered.push(p) }, chain, { approvals });
  return { approvals, outlet, delivered };
}

const toolCall = () => proposal({ kind: "dispatch", action: "tool", content: "{}", data: { tool: "delete_all", input: {} } });

describe("an unholdable review", () => {
  it("refuses a held proposal with the reason, and keeps it out of the approval queue", async () => {
    const { approvals, outlet, delivered } = wire();
    const call = toolCall();
    const verdict = await outlet.review(call, { holdable: false });
    expect(isGateIntercept(verdict) && verdict.reason).toBe(
      'bouncer: tool "delete_all" is not on the allowlist: held for human approval (held for human approval, but tool calls cannot wait for approval, so it is refused)',
    );
    const speech = await outlet.review(proposal(), { holdable: false });
    expect(isGateIntercept(speech) && speech.reason).toMatch(/^approval: needs human approval \(.*cannot wait for approval/);
    expect(approvals.pending()).toEqual([]);
    expect(await approvals.approve(call.id, "alice")).toMatchObject({ outcome: "unknown" });
    expect(delivered).toEqual([]);
  });

  it("leaves a holdable review as it was: held, and delivered once approved", async () => {
    const { approvals, outlet, delivered } = wire();
    const call = toolCall();
    expect(isGateIntercept(await outlet.review(call))).toBe(true);
    expect(approvals.pending().map((h) => h.proposal.id)).toEqual([call.id]);
    expect(await approvals.approve(call.id, "alice")).toMatchObject({ outcome: "approved" });
    expect(delivered.map((p) => p.id)).toEqual([call.id]);
  });
});
