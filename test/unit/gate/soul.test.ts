import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bouncer, createApprovals, createGateChain, gatedOutlet, intercept, lengthGate, whenPerception, type GateDecision, type HeldProposal } from "../../../actors/gate/index.ts";
import { createInProcessOutlet, createSoul, defineSoul, useActions, usePerceptions, type MentalProcess, type Proposal, type Soul } from "../../../actors/soul/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { openTestEnv, type TestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";
import { fakeSecrets } from "./support.ts";

const LONG = Array.from({ length: 800 }, (_, i) => `w${i}`).join(" "); // ~4000 chars

/** A soul that does what it is told: leak a key, ramble, or call a tool. */
const obedient: MentalProcess = async ({ workingMemory }) => {
  const { speak, dispatch } = useActions();
  const order = usePerceptions().invokingPerception.content;
  if (order === "leak") speak(`Sure, my key is ${fakeSecrets.anthropic}`);
  else if (order === "ramble") speak(LONG);
  else if (order === "wipe") dispatch({ action: "tool", content: "wipe everything", tool: "delete_all" });
  else speak(`you said ${order}`);
  return workingMemory;
};
const blueprint = defineSoul({ name: "Obedient", persona: "", initialProcess: obedient, processes: { obedient } });

let env: TestEnv;
let approvalStore: Store;
let souls: Soul[];
beforeEach(async () => {
  env = await openTestEnv();
  approvalStore = openStore({ path: `${env.dir}/approvals`, noSync: true });
  souls = [];
});
afterEach(async () => {
  await Promise.all(souls.map((s) => s.stop()));
  await approvalStore.close();
  await env.close();
});

function start() {
  const inner = createInProcessOutlet();
  const reached: Proposal[] = [];
  inner.onProposal((p) => reached.push(p));
  const decisions: GateDecision[] = [];
  const approvals = createApprovals({ kv: approvalStore.kv<HeldProposal>("node", "gate-approvals"), authorizedUsers: ["ops"], onDecision: (d) => decisions.push(d) });
  const chain = createGateChain([bouncer({ allowlist: ["search"] }), lengthGate()], { onDecision: (d) => decisions.push(d) });
  const soul = createSoul({ blueprint, id: "obedient", store: env.actor("obedient"), outlet: gatedOutlet(inner, chain, { approvals }) });
  souls.push(soul);
  return { soul, reached, decisions, approvals, log: record(soul) };
}

describe("a real soul behind gatedOutlet", () => {
  it("never lets a secret reach the inner outlet; the soul records the interception and keeps going", async () => {
    const { soul, reached, decisions, log } = start();
    await soul.perceive(said("leak"));
    await soul.idle();
    await soul.perceive(said("hello"));
    await soul.idle();
    expect(reached.map((p) => p.content)).toEqual(["you said hello"]);
    expect(JSON.stringify(reached)).not.toContain(fakeSecrets.anthropic);
    const intercepted = log.events.filter((e) => e.type === "intercepted");
    expect(intercepted).toHaveLength(1);
    expect(intercepted[0].type === "intercepted" && intercepted[0].reason).toContain("an Anthropic API key");
    // Nothing of it was committed for delivery either.
    expect(env.actor("obedient").pendingOutbox()).toEqual([]);
    expect(decisions.filter((d) => d.decision === "intercept").map((d) => [d.gate, d.phase])).toEqual([["bouncer", "review"]]);
    expect(soul.state().turn).toBe(2);
  });

  it("delivers a long text truncated, visibly", async () => {
    const { soul, reached } = start();
    await soul.perceive(said("ramble"));
    await soul.idle();
    expect(reached).toHaveLength(1);
    expect(reached[0].content.length).toBeLessThanOrEqual(3000);
    expect(reached[0].content.endsWith("… [truncated]")).toBe(true);
    expect(LONG.startsWith(reached[0].content.replace(" … [truncated]", ""))).toBe(true);
  });

  it("holds a tool call that is not allowlisted until an authorised user approves it, then delivers it once", async () => {
    const { soul, reached, approvals } = start();
    await soul.perceive(said("wipe"));
    await soul.idle();
    expect(reached).toEqual([]);
    const [held] = approvals.pending();
    expect(held.proposal).toMatchObject({ kind: "dispatch", action: "tool", data: { tool: "delete_all" }, soulId: "obedient" });
    expect(await approvals.handlePerception({ action: "approve", content: held.proposal.id, name: "intruder" })).toMatchObject({ outcome: "refused" });
    expect(reached).toEqual([]);
    expect(await approvals.handlePerception({ action: "approve", content: held.proposal.id, name: "ops" })).toMatchObject({ outcome: "approved" });
    await approvals.handlePerception({ action: "approve", content: held.proposal.id, name: "ops" });
    expect(reached.map((p) => [p.id, p.action])).toEqual([[held.proposal.id, "tool"]]);
  });
});

describe("gates see the perception a proposal answers", () => {
  it("fires a perception-triggered gate only for the perception it names", async () => {
    const inner = createInProcessOutlet();
    const reached: Proposal[] = [];
    inner.onProposal((p) => reached.push(p));
    const seen: string[] = [];
    const chain = createGateChain([
      {
        name: "noDmReplies",
        priority: 10,
        trigger: whenPerception("dm"),
        verify: (_proposal, ctx) => {
          seen.push(`${ctx.perception?.name}:${ctx.perception?.content}`);
          return intercept("no replies to direct messages");
        },
      },
    ]);
    const soul = createSoul({ blueprint, id: "obedient", store: env.actor("obedient"), outlet: gatedOutlet(inner, chain) });
    souls.push(soul);
    await soul.perceive({ action: "dm", content: "psst", name: "eve" });
    await soul.idle();
    await soul.perceive(said("hello"));
    await soul.idle();
    expect(seen).toEqual(["eve:psst"]);
    expect(reached.map((p) => p.content)).toEqual(["you said hello"]);
  });
});
