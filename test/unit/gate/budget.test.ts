import { describe, expect, it } from "vitest";
import { budgetGate, createGateChain, periodStart } from "../../../actors/gate/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";
import { proposal } from "./support.ts";

const DAY = 86_400_000;

describe("budget gate", () => {
  it("passes under the token limit and intercepts once the soul's tokens for the period are spent", async () => {
    let now = Date.UTC(2025, 0, 15, 10);
    const budget = budgetGate({ limits: { tokens: 1_000 }, period: "day", now: () => now });
    const chain = createGateChain([budget]);
    const p = proposal({ soulId: "s1" });
    await budget.record("s1", { inputTokens: 600, outputTokens: 300 });
    expect((await chain.run(p)).ok).toBe(true);
    await budget.record("s1", { inputTokens: 50, outputTokens: 60 });
    const blocked = await chain.run(p);
    expect(blocked).toMatchObject({ ok: false, gate: "budget", decision: "intercept" });
    expect(!blocked.ok && blocked.interception.reason).toContain("token budget spent: 1010 of 1000 tokens this day");
    // Another soul's budget is its own.
    expect((await chain.run(proposal({ soulId: "s2" }))).ok).toBe(true);

    // The next day starts a new period.
    now += DAY;
    expect((await chain.run(p)).ok).toBe(true);
    expect(budget.usage("s1")).toMatchObject({ inputTokens: 0, outputTokens: 0, calls: 0, start: Date.UTC(2025, 0, 16) });
  });

  it("prices usage from the model price table and intercepts at the cost limit", async () => {
    const now = Date.UTC(2025, 5, 3);
    const budget = budgetGate({
      limits: (soulId) => (soulId === "rich" ? undefined : { costUsd: 0.05 }),
      period: "month",
      prices: { "anthropic:claude-x": { inputPerMTok: 3, outputPerMTok: 15 }, "llama-y": { inputPerMTok: 0.1, outputPerMTok: 0.1 } },
      now: () => now,
    });
    await budget.record("s1", { inputTokens: 10_000, outputTokens: 1_000, model: "anthropic:claude-x" }); // 0.03 + 0.015
    expect(budget.usage("s1").costUsd).toBeCloseTo(0.045, 6);
    expect(budget.verify(proposal({ soulId: "s1" }), {})).toMatchObject({ soulId: "s1" });
    await budget.record("s1", { inputTokens: 50_000, outputTokens: 0, model: "groq:llama-y" }); // bare name lookup: 0.005
    expect(budget.usage("s1").costUsd).toBeCloseTo(0.05, 6);
    expect(budget.verify(proposal({ soulId: "s1" }), {})).toMatchObject({ intercepted: true, reason: expect.stringContaining("cost budget spent") });
    // Unpriced models are counted separately, so nobody mistakes them for free.
    await budget.record("s1", { inputTokens: 7, outputTokens: 3, model: "mystery:model" });
    expect(budget.usage("s1").unpricedTokens).toBe(10);
    // A soul without limits is never intercepted.
    await budget.record("rich", { inputTokens: 1e9, outputTokens: 1e9, model: "anthropic:claude-x" });
    expect(budget.verify(proposal({ soulId: "rich" }), {})).toMatchObject({ soulId: "rich" });
  });

  it("does not charge usage from a finished period to the current one", async () => {
    const now = Date.UTC(2025, 0, 15, 10, 30);
    const budget = budgetGate({ limits: { tokens: 100 }, period: "hour", now: () => now });
    await budget.record("s1", { inputTokens: 500, outputTokens: 0, ts: now - 3_600_000 });
    expect(budget.exceeded("s1")).toBeUndefined();
  });

  it("computes UTC calendar periods and fixed windows", () => {
    const at = Date.UTC(2025, 0, 15, 13, 45); // a Wednesday
    expect(periodStart("hour", at)).toBe(Date.UTC(2025, 0, 15, 13));
    expect(periodStart("day", at)).toBe(Date.UTC(2025, 0, 15));
    expect(periodStart("week", at)).toBe(Date.UTC(2025, 0, 13));
    expect(periodStart("month", at)).toBe(Date.UTC(2025, 0, 1));
    expect(periodStart({ ms: 60_000 }, at + 59_999)).toBe(at + 0);
  });

  describe("with LMDB", () => {
    const stores = tempStores();
    it("keeps what was spent across a restart when given a kv", async () => {
      const now = Date.UTC(2025, 2, 1, 12);
      const store = stores.open({ noSync: true });
      const first = budgetGate({ limits: { tokens: 100 }, now: () => now, kv: (id) => store.kv(id, "gate-budget") });
      await first.record("s1", { inputTokens: 80, outputTokens: 40 });
      await store.close();
      const reopened = stores.open({ noSync: true });
      const second = budgetGate({ limits: { tokens: 100 }, now: () => now, kv: (id) => reopened.kv(id, "gate-budget") });
      expect(second.usage("s1")).toMatchObject({ inputTokens: 80, outputTokens: 40 });
      expect(second.exceeded("s1")).toContain("token budget spent");
    });
  });
});
