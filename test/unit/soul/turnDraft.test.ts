import { describe, expect, it } from "vitest";
import { initialSoulState, type SoulState } from "../../../actors/soul/SoulState.ts";
import { sameValue, TurnDraft } from "../../../actors/soul/TurnDraft.ts";

const PLACE = { currentProcess: "main", turn: 1, nextParams: null };

/** A committed state that the test can replace while a draft is open, as a whisper would. */
function committed(soulMemory: Record<string, unknown>): { state: SoulState; draft: TurnDraft; commit(): Record<string, unknown> } {
  const holder = { state: { ...initialSoulState("Ann", "main"), soulMemory } as SoulState };
  const draft = new TurnDraft(() => holder.state, "ann:1", holder.state.memory);
  return {
    get state() {
      return holder.state;
    },
    set state(next: SoulState) {
      holder.state = next;
    },
    draft,
    commit: () => draft.applyTo(holder.state, draft.memory, PLACE).soulMemory as Record<string, unknown>,
  };
}

/** What useSoulMemory does on a first read: a private copy of an object, tracked as a read. */
function read(draft: TurnDraft, name: string, initial?: unknown): unknown {
  if (!draft.hasSoulMemory(name)) draft.trackSoulMemoryRead(name, structuredClone(initial), initial, true);
  else {
    const value = draft.readSoulMemory(name);
    if (typeof value === "object" && value !== null) draft.trackSoulMemoryRead(name, structuredClone(value), value, false);
  }
  return draft.readSoulMemory(name);
}

describe("TurnDraft soul memory at commit", () => {
  it("drops a read-only copy, so a value that changed meanwhile is kept", () => {
    const c = committed({ profile: { name: "Ada" }, other: 1 });
    expect(read(c.draft, "profile")).toEqual({ name: "Ada" });
    const replaced = { name: "Bea" };
    c.state = { ...c.state, soulMemory: { ...c.state.soulMemory, profile: replaced } };
    const out = c.commit();
    expect(out["profile"]).toBe(replaced);
    // Nothing was written: the committed record itself is reused.
    expect(out).toBe(c.state.soulMemory);
  });

  it("writes a copy the turn edited in place, and an assignment, whatever the key holds by then", () => {
    const c = committed({ profile: { visits: 1 }, tags: ["a"] });
    (read(c.draft, "profile") as { visits: number }).visits += 1;
    read(c.draft, "tags");
    c.draft.setSoulMemory("tags", ["assigned"]);
    c.state = { ...c.state, soulMemory: { profile: { visits: 100 }, tags: ["concurrent"] } };
    expect(c.commit()).toEqual({ profile: { visits: 2 }, tags: ["assigned"] });
  });

  it("stores the initial value of an absent key only while the key is still absent, unless the turn edited it", () => {
    const c = committed({});
    read(c.draft, "untouched", null);
    (read(c.draft, "edited", { n: 0 }) as { n: number }).n = 5;
    read(c.draft, "default", { n: 0 });
    expect(c.commit()).toEqual({ untouched: null, edited: { n: 5 }, default: { n: 0 } });
    c.state = { ...c.state, soulMemory: { untouched: "arrived", edited: "arrived", default: "arrived" } };
    expect(c.commit()).toEqual({ untouched: "arrived", edited: { n: 5 }, default: "arrived" });
  });

  it("consumes a value only while it is still, by identity, the one consumed, and never over the turn's own write", () => {
    const whisper = { content: "first", source: "K" };
    const c = committed({ daimonicWhisper: whisper });
    c.draft.consumeSoulMemory("daimonicWhisper", whisper);
    expect(c.commit()).toEqual({ daimonicWhisper: null });
    // An equal but new whisper is a different one: it survives.
    c.state = { ...c.state, soulMemory: { daimonicWhisper: { content: "first", source: "K" } } };
    expect(c.commit()).toEqual({ daimonicWhisper: { content: "first", source: "K" } });
    c.state = { ...c.state, soulMemory: { daimonicWhisper: whisper } };
    c.draft.setSoulMemory("daimonicWhisper", "mine");
    expect(c.commit()).toEqual({ daimonicWhisper: "mine" });
  });

  it("merges a fork's reads by the same rule: an unedited copy is no write, an edit of the parent's value is", () => {
    const c = committed({ a: { n: 1 }, b: { n: 1 } });
    const fork = c.draft.fork();
    read(fork, "a");
    (read(fork, "b") as { n: number }).n = 2;
    c.draft.merge(fork);
    expect(c.draft.hasWrites(c.draft.memory)).toBe(true);
    c.state = { ...c.state, soulMemory: { a: { n: 9 }, b: { n: 9 } } };
    expect(c.commit()).toEqual({ a: { n: 9 }, b: { n: 2 } });

    const parentOwned = committed({ a: { n: 1 } });
    (read(parentOwned.draft, "a") as { n: number }).n = 3;
    const second = parentOwned.draft.fork();
    expect(read(second, "a")).toEqual({ n: 3 });
    (second.readSoulMemory("a") as { n: number }).n = 4;
    parentOwned.draft.merge(second);
    expect(parentOwned.commit()).toEqual({ a: { n: 4 } });
  });

  it("a draft that only read objects has nothing worth a commit", () => {
    const c = committed({ a: { n: 1 } });
    const fork = c.draft.fork();
    read(fork, "a");
    c.draft.merge(fork);
    expect(c.draft.hasWrites(c.draft.memory)).toBe(false);
  });
});

describe("sameValue", () => {
  it("compares what a structured clone carries, structurally", () => {
    class Point {
      constructor(
        public x: number,
        public y: number,
      ) {}
    }
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic["self"] = cyclic;
    const values: unknown[] = [
      { a: [1, { b: "c" }], d: null, e: undefined },
      new Date(5),
      new Map<unknown, unknown>([["k", { v: 1 }]]),
      new Set([1, "two"]),
      new Uint8Array([1, 2, 3]),
      /re/gi,
      new Point(1, 2),
      cyclic,
      [Number.NaN, -0],
    ];
    for (const value of values) expect(sameValue(structuredClone(value), value)).toBe(true);
  });

  it("sees an in-place change anywhere inside", () => {
    const pairs: [unknown, unknown][] = [
      [{ a: [1, 2] }, { a: [1, 2, 3] }],
      [{ a: 1 }, { a: 1, b: 2 }],
      [{ a: 1, b: undefined }, { a: 1, c: undefined }],
      [new Date(1), new Date(2)],
      [new Map([["k", 1]]), new Map([["k", 2]])],
      [new Set([1]), new Set([2])],
      [new Uint8Array([1]), new Uint8Array([2])],
      [new Uint8Array([1]), new Int8Array([1])],
      [[1], { 0: 1 }],
      [0, -0],
      [null, {}],
    ];
    for (const [a, b] of pairs) expect(sameValue(a, b)).toBe(false);
  });
});
