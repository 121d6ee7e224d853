/**
 * A tool call cannot wait for a human's approval: when the bouncer (a tool not on its
 * allowlist) or an approval gate holds it, the call is refused at once with a reason that
 * says so, and it never enters the approval queue, where an approval would deliver it to
 * the outlet as a dispatch.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { approvalGate, bouncer, createApprovals, createGateChain, gatedOutlet, type Gate, type HeldProposal } from "../../../actors/gate/index.ts";
import { createInProcessOutlet, createMemoryActorStore, createSoul, defineSoul, usePerceptions, useTool, type MentalProcess, type Proposal } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, ToolRejectedError, type ToolEvent } from "../../../actors/tool/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";
import { record, said } from "../../support/soul/helpers.ts";

const stores = tempStores();

function soulWith(gates: Gate[]) {
  let runs = 0;
  const wipe = defineTool({ name: "wipe", description: "wipes everything", input: z.object({}), run: () => void runs++ });
  const errors: unknown[] = [];
  // Calls the tool the perception names and keeps what went wrong; it says nothing itself, so
  // anything that reaches the outlet came from the gates.
  const process: MentalProcess = async ({ workingMemory }) => {
    try {
      await useTool(usePerceptions().invokingPerception.content)({});
    } catch (err) {
      errors.push(err);
    }
    return workingMemory;
  };
  const blueprint = defineSoul({ name: "Toolie", persona: "uses tools", initialProcess: process, processes: { process } });
  const inner = createInProcessOutlet();
  const reached: Proposal[] = [];
  inner.onProposal((p) => reached.push(p));
  const approvals = createApprovals({ kv: stores.open({ noSync: true }).kv<HeldProposal>("node", "gate-approvals"), authorizedUsers: ["ops"] });
  const outlet = gatedOutlet(inner, createGateChain(gates), { approvals });
  const soul = createSoul({ blueprint, id: "s1", store: createMemoryActorStore("s1"), outlet, services: { tools: createToolRegistry([wipe]) } });
  const log = record(soul);
  return { soul, log, approvals, reached, errors, runs: () => runs };
}

describe("a held tool call", () => {
  it.each([
    ["the bouncer (not on its allowlist)", () => bouncer({ allowlist: ["search"] }), 'bouncer: tool "wipe" is not on the allowlist: held for human approval'],
    ["an approval gate", () => approvalGate({ requires: (p) => p.kind === "dispatch" }), "approval: needs human approval"],
  ])("is refused at once when %s holds it, and never enters the approval queue", async (_name, gate, gateReason) => {
    const { soul, log, approvals, reached, errors, runs } = soulWith([gate()]);
    await soul.perceive(said("wipe"));
    await soul.idle();
    expect(errors).toHaveLength(1);
    const [err] = errors;
    expect(err).toBeInstanceOf(ToolRejectedError);
    // The reason the model sees: why it was held, and that a tool call cannot wait for approval.
    expect((err as ToolRejectedError).reason).toBe(`${gateReason} (held for human approval, but tool calls cannot wait for approval, so it is refused)`);
    expect(runs()).toBe(0);
    expect(approvals.pending()).toEqual([]);
    expect(reached).toEqual([]);
    const results = log.events.filter((e): e is ToolEvent => e.type === "tool.result");
    expect(results.map((e) => e.type === "tool.result" && e.outcome)).toEqual(["rejected"]);
    // Approving the call's id afterwards finds nothing to deliver.
    const callId = results[0].callId;
    expect(await approvals.approve(callId, "ops")).toMatchObject({ outcome: "unknown" });
    expect(reached).toEqual([]);
    await soul.stop();
  });
});
