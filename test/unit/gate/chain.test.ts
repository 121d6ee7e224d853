import { describe, expect, it } from "vitest";
import { chainVerdict, createGateChain, hold, intercept, type Gate, type GateDecision } from "../../../actors/gate/index.ts";
import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import { proposal, spyGate } from "./support.ts";

describe("gate chain", () => {
  it("runs gates highest priority first, whatever order they were given in; ties keep their order", async () => {
    const order: string[] = [];
    const g = (name: string, priority: number): Gate => ({
      name,
      priority,
      verify: (p) => {
        order.push(name);
        return p;
      },
    });
    const chain = createGateChain([g("low", 10), g("high", 100), g("mid-a", 50), g("mid-b", 50), g("negative", -5)]);
    expect(chain.gates.map((x) => x.name)).toEqual(["high", "mid-a", "mid-b", "low", "negative"]);
    const result = await chain.run(proposal());
    expect(result.ok).toBe(true);
    expect(order).toEqual(["high", "mid-a", "mid-b", "low", "negative"]);
  });

  it("runs only the gates whose trigger matches, and passes the context and proposal to the trigger", async () => {
    const always = spyGate("always", 1);
    const speechOnly = spyGate("speechOnly", 2, undefined, { trigger: (_ctx, p) => p.kind === "speak" });
    const saidOnly = spyGate("saidOnly", 3, undefined, { trigger: (ctx) => ctx.perception?.action === "said" });
    const decisions: GateDecision[] = [];
    const chain = createGateChain([always, speechOnly, saidOnly], { onDecision: (d) => decisions.push(d) });

    await chain.run(proposal({ kind: "log" }), { perception: { action: "joined", content: "", name: "Ada" } });
    expect([always.calls.length, speechOnly.calls.length, saidOnly.calls.length]).toEqual([1, 0, 0]);
    // A skipped gate records no decision.
    expect(decisions.map((d) => d.gate)).toEqual(["always"]);

    await chain.run(proposal({ kind: "speak" }), { perception: { action: "said", content: "hi", name: "Ada" } });
    expect([always.calls.length, speechOnly.calls.length, saidOnly.calls.length]).toEqual([2, 1, 1]);
  });

  it("stops at the first interception: later gates are not called", async () => {
    const first = spyGate("first", 30);
    const blocker = spyGate("blocker", 20, () => intercept("not today", "log"));
    const later = spyGate("later", 10);
    const decisions: GateDecision[] = [];
    const chain = createGateChain([later, blocker, first], { onDecision: (d) => decisions.push(d) });
    const p = proposal();
    const result = await chain.run(p);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result).toMatchObject({ gate: "blocker", decision: "intercept", interception: { intercepted: true, kind: "log", reason: "not today" } });
    expect(first.calls).toHaveLength(1);
    expect(later.calls).toHaveLength(0);
    expect(decisions.map((d) => [d.gate, d.decision, d.proposalId])).toEqual([
      ["first", "pass", p.id],
      ["blocker", "intercept", p.id],
    ]);
    expect(chainVerdict(result)).toEqual({ intercepted: true, kind: "log", reason: "blocker: not today" });
  });

  it("passes a transformed proposal on to the next gate; a gate cannot change which proposal it is", async () => {
    const upper = spyGate("upper", 20, (p) => ({ ...p, content: p.content.toUpperCase(), id: "forged", soulId: "other" }));
    const seen = spyGate("seen", 10);
    const decisions: GateDecision[] = [];
    const chain = createGateChain([seen, upper], { onDecision: (d) => decisions.push(d) });
    const p = proposal({ content: "quiet words" });
    const result = await chain.run(p);
    expect(seen.calls[0].content).toBe("QUIET WORDS");
    expect(result.ok && result.proposal).toEqual({ ...p, content: "QUIET WORDS" });
    expect(decisions.map((d) => [d.gate, d.decision, d.reason])).toEqual([
      ["upper", "transform", "changed content"],
      ["seen", "pass", undefined],
    ]);
  });

  it("sees a gate that edits the proposal in place as a transform, and leaves the caller's proposal untouched", async () => {
    const sneaky = spyGate("sneaky", 1, (p) => {
      p.content = "edited";
      return p;
    });
    const decisions: GateDecision[] = [];
    const original = proposal({ content: "original" });
    const result = await createGateChain([sneaky], { onDecision: (d) => decisions.push(d) }).run(original);
    expect(original.content).toBe("original");
    expect(result.ok && result.proposal.content).toBe("edited");
    expect(decisions.map((d) => d.decision)).toEqual(["transform"]);
  });

  it("blocks with the reason when a gate throws (sync or async) or its trigger throws", async () => {
    const later = spyGate("later", 1);
    const syncThrow = createGateChain([spyGate("crashy", 5, () => {
      throw new Error("boom");
    }), later]);
    const r1 = await syncThrow.run(proposal());
    expect(r1).toMatchObject({ ok: false, gate: "crashy", decision: "error", interception: { reason: "gate crashy failed: boom" } });

    const asyncThrow = createGateChain([spyGate("sour", 5, async () => Promise.reject(new TypeError("bad input")))]);
    expect(await asyncThrow.run(proposal())).toMatchObject({ ok: false, decision: "error", interception: { reason: "gate sour failed: bad input" } });

    const badTrigger = createGateChain([spyGate("picky", 5, undefined, {
      trigger: () => {
        throw new Error("cannot tell");
      },
    })]);
    expect(await badTrigger.run(proposal())).toMatchObject({ ok: false, decision: "error", interception: { reason: "trigger of gate picky failed: cannot tell" } });
    expect(later.calls).toHaveLength(0);
  });

  it("blocks when a gate answers something that is neither a proposal nor an interception", async () => {
    const bad: [string, unknown][] = [
      ["nothing", undefined],
      ["a string", "ok"],
      ["no content", { ...proposal(), content: 42 }],
      ["reasonless", { intercepted: true, kind: "event", reason: "  " }],
      ["odd kind", { intercepted: true, kind: "shout", reason: "x" }],
    ];
    for (const [name, answer] of bad) {
      const chain = createGateChain([{ name, priority: 1, verify: () => answer as Proposal }]);
      const result = await chain.run(proposal());
      expect(result.ok, name).toBe(false);
      expect(!result.ok && result.decision, name).toBe("error");
      expect(!result.ok && result.interception.reason, name).toContain(name);
    }
  });

  it("blocks a gate that misses its deadline, aborts its signal, and does not wait for it", async () => {
    let aborted = false;
    const slow: Gate = {
      name: "slow",
      priority: 1,
      verify: (p, ctx) =>
        new Promise<Proposal>((resolve) => {
          ctx.signal?.addEventListener("abort", () => (aborted = true));
          setTimeout(() => resolve(p), 2_000);
        }),
    };
    const decisions: GateDecision[] = [];
    const chain = createGateChain([slow], { timeoutMs: 50, onDecision: (d) => decisions.push(d) });
    const started = Date.now();
    const result = await chain.run(proposal());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(result).toMatchObject({ ok: false, decision: "timeout", gate: "slow", interception: { reason: "gate slow timed out after 50 ms" } });
    expect(aborted).toBe(true);
    expect(decisions.map((d) => d.decision)).toEqual(["timeout"]);
  });

  it("honours a gate's own deadline over the chain default", async () => {
    const slowish: Gate = { name: "slowish", priority: 1, timeoutMs: 500, verify: async (p) => new Promise((r) => setTimeout(() => r(p), 100)) };
    const chain = createGateChain([slowish], { timeoutMs: 20 });
    expect((await chain.run(proposal())).ok).toBe(true);
  });

  it("records a hold as its own decision and stops there", async () => {
    const later = spyGate("later", 1);
    const decisions: GateDecision[] = [];
    const chain = createGateChain([spyGate("human", 5, () => hold("ask first")), later], { onDecision: (d) => decisions.push(d) });
    const result = await chain.run(proposal(), { phase: "review" });
    expect(result).toMatchObject({ ok: false, decision: "hold", interception: { hold: true, reason: "ask first" } });
    expect(decisions).toMatchObject([{ gate: "human", decision: "hold", reason: "ask first", phase: "review" }]);
    expect(later.calls).toHaveLength(0);
  });

  it("keeps deciding when a decision listener throws", async () => {
    const chain = createGateChain([spyGate("a", 1)], {
      onDecision: () => {
        throw new Error("listener down");
      },
    });
    expect((await chain.run(proposal())).ok).toBe(true);
  });

  it("refuses a malformed gate when the chain is built", () => {
    expect(() => createGateChain([{ name: "", priority: 1, verify: (p) => p }])).toThrow(/non-empty name/);
    expect(() => createGateChain([{ name: "x", priority: Number.NaN, verify: (p) => p }])).toThrow(/priority/);
    expect(() => createGateChain([{ name: "x", priority: 1 } as unknown as Gate])).toThrow(/verify/);
  });
});
