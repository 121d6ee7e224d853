import { describe, expect, it } from "vitest";
import { createGateChain, hold, intercept, proposeWithRetries, type Gate, type GateContext } from "../../../actors/gate/index.ts";
import { proposal } from "./support.ts";

/** Rejects anything that mentions "forbidden". */
const censor: Gate = { name: "censor", priority: 1, verify: (p) => (p.content.includes("forbidden") ? intercept("mentions the forbidden topic") : p) };

describe("proposeWithRetries", () => {
  it("feeds the rejection reason into the next attempt and returns the first proposal that passes", async () => {
    const feedbacks: (string | undefined)[] = [];
    const contexts: GateContext[] = [];
    const spy: Gate = { name: "spy", priority: 2, verify: (p, ctx) => (contexts.push(ctx), p) };
    const chain = createGateChain([censor, spy]);
    const result = await proposeWithRetries(
      async (feedback) => {
        feedbacks.push(feedback);
        return proposal({ content: feedback ? "a safe answer" : "the forbidden answer" });
      },
      chain,
      { soulId: "s1" },
    );
    expect(result.ok).toBe(true);
    expect(result.attempts).toBe(2);
    expect(result.ok && result.proposal.content).toBe("a safe answer");
    expect(feedbacks[0]).toBeUndefined();
    expect(feedbacks[1]).toContain("censor");
    expect(feedbacks[1]).toContain("mentions the forbidden topic");
    expect(contexts.map((c) => [c.soulId, c.reasoning, c.attempt])).toEqual([
      ["s1", true, 1],
      ["s1", true, 2],
    ]);
  });

  it("stops after 3 attempts and returns the last interception", async () => {
    const feedbacks: (string | undefined)[] = [];
    const result = await proposeWithRetries(
      async (feedback) => {
        feedbacks.push(feedback);
        return proposal({ content: `forbidden, attempt ${feedbacks.length}` });
      },
      createGateChain([censor]),
    );
    expect(feedbacks).toHaveLength(3);
    expect(feedbacks.slice(1).every((f) => f?.includes("mentions the forbidden topic"))).toBe(true);
    expect(result).toMatchObject({ ok: false, attempts: 3 });
    expect(!result.ok && result.result.interception.reason).toBe("mentions the forbidden topic");
    expect(!result.ok && result.result.proposal.content).toBe("forbidden, attempt 3");
  });

  it("honours maxAttempts, and does not retry holds or gate failures", async () => {
    let calls = 0;
    const gen = async () => (calls++, proposal({ content: "forbidden" }));
    await proposeWithRetries(gen, createGateChain([censor]), {}, { maxAttempts: 5 });
    expect(calls).toBe(5);

    calls = 0;
    const held = await proposeWithRetries(gen, createGateChain([{ name: "human", priority: 1, verify: () => hold("ask") }]));
    expect(calls).toBe(1);
    expect(held).toMatchObject({ ok: false, result: { decision: "hold" } });

    calls = 0;
    const broken: Gate = {
      name: "broken",
      priority: 1,
      verify: () => {
        throw new Error("down");
      },
    };
    expect(await proposeWithRetries(gen, createGateChain([broken]))).toMatchObject({ ok: false, attempts: 1, result: { decision: "error" } });
    expect(calls).toBe(1);
    await expect(proposeWithRetries(gen, createGateChain([censor]), {}, { maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
  });
});
