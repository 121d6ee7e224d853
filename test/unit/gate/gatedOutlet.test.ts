import { describe, expect, it } from "vitest";
import { bouncer, createGateChain, GateDispatchError, gatedOutlet, intercept, isGateIntercept, lengthGate, type Gate, type GateDecision } from "../../../actors/gate/index.ts";
import type { Outlet } from "../../../actors/vocabulary/outlet.ts";
import { isInterception, type Proposal } from "../../../actors/vocabulary/Proposal.ts";
import { fakeSecrets, proposal } from "./support.ts";

function innerOutlet() {
  const delivered: Proposal[] = [];
  const chunks: string[] = [];
  const outlet: Outlet = { deliver: (p) => void delivered.push(p), chunk: (_s, _p, text) => void chunks.push(text) };
  return { outlet, delivered, chunks };
}

describe("gatedOutlet", () => {
  it("reviews with the chain: passes, transforms and intercepts", async () => {
    const { outlet: inner } = innerOutlet();
    const outlet = gatedOutlet(inner, createGateChain([bouncer(), lengthGate({ maxChars: 30 })]));
    const short = proposal({ content: "short" });
    expect(await outlet.review(short)).toEqual(short);
    const long = await outlet.review(proposal({ content: "one two three four five six seven eight nine" }));
    expect(!isInterception(long) && long.content).toBe("one two three … [truncated]");
    const secret = await outlet.review(proposal({ content: `key ${fakeSecrets.anthropic}` }));
    expect(isGateIntercept(secret) && secret.reason).toMatch(/^bouncer: outgoing speak contains an Anthropic API key/);
  });

  it("re-verifies at dispatch: a proposal that now fails is not delivered, and the decision is recorded", async () => {
    const { outlet: inner, delivered } = innerOutlet();
    let spent = false;
    const budgetLike: Gate = { name: "budget", priority: 50, verify: (p) => (spent ? intercept("budget spent") : p) };
    const decisions: GateDecision[] = [];
    const blocked: string[] = [];
    const outlet = gatedOutlet(inner, createGateChain([budgetLike], { onDecision: (d) => decisions.push(d) }), { onBlocked: (p) => blocked.push(p.id) });
    const a = proposal();
    const b = proposal();
    expect(await outlet.review(a)).toEqual(a);
    expect(await outlet.review(b)).toEqual(b);
    await outlet.deliver(a);
    spent = true;
    await outlet.deliver(b); // resolves: the outbox must not retry an interception forever
    expect(delivered.map((p) => p.id)).toEqual([a.id]);
    expect(blocked).toEqual([b.id]);
    expect(decisions.map((d) => [d.proposalId, d.phase, d.decision])).toEqual([
      [a.id, "review", "pass"],
      [b.id, "review", "pass"],
      [a.id, "dispatch", "pass"],
      [b.id, "dispatch", "intercept"],
    ]);
  });

  it("delivers the transformed proposal at dispatch, and throws (outbox keeps it) when a gate cannot decide", async () => {
    const { outlet: inner, delivered } = innerOutlet();
    let broken = false;
    const flaky: Gate = {
      name: "flaky",
      priority: 1,
      verify: (p) => {
        if (broken) throw new Error("gate offline");
        return { ...p, content: p.content.trim() };
      },
    };
    const outlet = gatedOutlet(inner, createGateChain([flaky]));
    await outlet.deliver(proposal({ content: "  padded  " }));
    expect(delivered.map((p) => p.content)).toEqual(["padded"]);
    broken = true;
    await expect(outlet.deliver(proposal())).rejects.toBeInstanceOf(GateDispatchError);
    expect(delivered).toHaveLength(1);
  });

  it("does not stream unless asked; asked, it streams only pieces the chain passed, whole sentences", async () => {
    const quiet = innerOutlet();
    expect(gatedOutlet(quiet.outlet, createGateChain([])).chunk).toBeUndefined();
    const streaming = innerOutlet();
    const outlet = gatedOutlet(streaming.outlet, createGateChain([]), { streamChunks: true });
    outlet.chunk?.("s1", "s1:1:0", "Hello the");
    outlet.chunk?.("s1", "s1:1:0", "re. How are");
    await new Promise((r) => setTimeout(r, 10));
    // Only the finished sentence: "How are" waits for its end.
    expect(streaming.chunks).toEqual(["Hello there. "]);
  });

  it("passes the configured context to the gates, with the phase", async () => {
    const seen: unknown[] = [];
    const spy: Gate = { name: "spy", priority: 1, verify: (p, ctx) => (seen.push([ctx.phase, ctx.soulId, ctx.data?.node]), p) };
    const outlet = gatedOutlet(innerOutlet().outlet, createGateChain([spy]), { context: () => ({ data: { node: "n1" }, phase: "dispatch" }) });
    await outlet.review(proposal());
    await outlet.deliver(proposal());
    expect(seen).toEqual([
      ["review", "s1", "n1"],
      ["dispatch", "s1", "n1"],
    ]);
  });
});
