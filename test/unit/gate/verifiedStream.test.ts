/**
 * Streaming behind the gates: pieces are released only once the chain has passed the whole
 * text so far; an interception (or a transform) stops the stream at the last verified piece.
 */
import { describe, expect, it } from "vitest";
import { createGateChain, type Gate } from "../../../actors/gate/index.ts";
import { pieceEnd, VerifiedStream } from "../../../actors/gate/verifiedStream.ts";

const settle = () => new Promise((r) => setTimeout(r, 5));

function harness(gates: Gate[], maxPiece?: number) {
  const shown: string[] = [];
  const seen: { content: string; phase: unknown }[] = [];
  const spy: Gate = { name: "spy", priority: 100, verify: (p, ctx) => (seen.push({ content: p.content, phase: ctx.phase }), p) };
  const stream = new VerifiedStream({ chain: createGateChain([...gates, spy]), forward: (_s, _p, piece) => shown.push(piece), ...(maxPiece ? { maxPiece } : {}) });
  return { stream, shown, seen };
}

describe("pieceEnd", () => {
  it("ends a piece after the last sentence end or line break, else after maxPiece at a space", () => {
    expect(pieceEnd("One. Two", 0, 100)).toBe(5);
    expect(pieceEnd("One. Two! Three", 0, 100)).toBe(10);
    expect(pieceEnd("line\nmore", 0, 100)).toBe(5);
    expect(pieceEnd("no end yet", 0, 100)).toBe(-1);
    expect(pieceEnd("aaaa bbbb cccc dddd", 0, 12)).toBe(10);
    expect(pieceEnd("version 1.5 is out", 0, 100)).toBe(-1);
  });
});

describe("VerifiedStream", () => {
  it("checks the whole text so far, phase stream, and forwards only the new piece", async () => {
    const { stream, shown, seen } = harness([]);
    stream.chunk("s1", "s1:3:0", "First sentence. Sec");
    await settle();
    stream.chunk("s1", "s1:3:0", "ond one! And");
    await settle();
    expect(shown).toEqual(["First sentence. ", "Second one! "]);
    expect(seen).toEqual([
      { content: "First sentence. ", phase: "stream" },
      { content: "First sentence. Second one! ", phase: "stream" },
    ]);
  });

  it("stops at the last verified piece when a gate intercepts: a secret split across pieces never shows", async () => {
    const bouncer: Gate = { name: "bouncer", priority: 1, verify: (p) => (p.content.replace(/\s/g, "").includes("swordfish") ? { intercepted: true, kind: "event", reason: "secret" } : p) };
    const clean = harness([bouncer]);
    clean.stream.chunk("s1", "s1:2:0", "Hello. The password is sword");
    await settle();
    clean.stream.chunk("s1", "s1:2:0", "fish. Later.");
    await settle();
    expect(clean.shown).toEqual(["Hello. "]);
    // Stopped for good: later clean sentences of that utterance are not streamed either.
    clean.stream.chunk("s1", "s1:2:0", " All fine now. ");
    await settle();
    expect(clean.shown).toEqual(["Hello. "]);
  });

  it("stops when a gate transforms the text (what was streamed would not be what is said)", async () => {
    const polite: Gate = { name: "polite", priority: 1, verify: (p) => ({ ...p, content: p.content.replace("darn", "gosh") }) };
    const { stream, shown } = harness([polite]);
    stream.chunk("s1", "s1:1:0", "Fine. Oh darn. Then.");
    await settle();
    expect(shown).toEqual([]);
  });

  it("streams nothing more of an utterance once it has ended (its review began)", async () => {
    let release!: () => void;
    const slow: Gate = { name: "slow", priority: 1, verify: (p) => new Promise((r) => (release = () => r(p))) };
    const { stream, shown } = harness([slow]);
    stream.chunk("s1", "s1:1:0", "A sentence. ");
    await settle();
    stream.end("s1:1:0");
    release();
    await settle();
    expect(shown).toEqual([]);
  });
});
