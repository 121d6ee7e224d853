import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_RESPONSE_CHARS, createGateChain, lengthGate, truncate, type GateDecision } from "../../../actors/gate/index.ts";
import { proposal } from "./support.ts";

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");

describe("length gate", () => {
  it("defaults to 3000 characters", () => {
    expect(DEFAULT_MAX_RESPONSE_CHARS).toBe(3000);
  });

  it("passes 2999 and 3000 characters untouched", async () => {
    const chain = createGateChain([lengthGate()]);
    for (const n of [2999, 3000]) {
      const p = proposal({ content: "x".repeat(n) });
      const result = await chain.run(p);
      expect(result.ok && result.proposal).toBe(p);
    }
  });

  it("truncates longer speech visibly, at a word boundary, within the limit", async () => {
    const decisions: GateDecision[] = [];
    const chain = createGateChain([lengthGate()], { onDecision: (d) => decisions.push(d) });
    const text = words(600); // ~5000 chars
    const p = proposal({ content: text });
    const result = await chain.run(p);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const out = result.proposal.content;
    expect(out.length).toBeLessThanOrEqual(3000);
    expect(out.length).toBeGreaterThan(2900);
    expect(out.endsWith("… [truncated]")).toBe(true);
    const kept = out.slice(0, -" … [truncated]".length);
    expect(text.startsWith(kept)).toBe(true);
    // Cut between words: what follows in the original is a space.
    expect(text.charAt(kept.length)).toBe(" ");
    expect(result.proposal.id).toBe(p.id);
    expect(decisions).toMatchObject([{ gate: "length", decision: "transform", reason: "changed content" }]);
    // Re-verifying the truncated text passes.
    expect((await chain.run(result.proposal)).ok && decisions.at(-1)?.decision).toBe("pass");
  });

  it("cuts a text without spaces hard, never splitting a surrogate pair", () => {
    const out = truncate("😀".repeat(100), 51, "…");
    expect(out.length).toBeLessThanOrEqual(51);
    expect(out.endsWith("…")).toBe(true);
    expect(/[\uD800-\uDBFF]$/.test(out.slice(0, -1))).toBe(false);
    expect(truncate("a".repeat(100), 20, "…")).toBe("a".repeat(19) + "…");
  });

  it("leaves other kinds alone unless configured, and honours a custom limit", () => {
    const gate = lengthGate({ maxChars: 40 });
    const log = proposal({ kind: "log", content: "z".repeat(100) });
    expect(gate.verify(log, {})).toBe(log);
    const dispatchGate = lengthGate({ maxChars: 40, kinds: ["dispatch"], marker: " [cut]" });
    const out = dispatchGate.verify(proposal({ kind: "dispatch", content: words(20) }), {});
    expect("content" in out && out.content).toMatch(/ \[cut\]$/);
    expect(() => lengthGate({ maxChars: 5 })).toThrow(/larger than the marker/);
  });
});
