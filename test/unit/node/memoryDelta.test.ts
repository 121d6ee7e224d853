/**
 * A turn record's memories as a delta from the turn before (runtime/node/failover/memoryDelta.ts):
 * what the common changes come to, that applying a delta gives back the memories exactly, and
 * that a delta the memories before it cannot satisfy is refused, not applied.
 */
import { describe, expect, it } from "vitest";
import { applyMemoryDelta, memoryDelta } from "../../../runtime/node/failover/memoryDelta.ts";

const m = (i: number) => ({ role: "user", content: `memory ${i}`, _id: `m${i}` });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => m(from + k));

describe("working memory deltas", () => {
  it("an appending turn sends what it added; a window that dropped its oldest says how many", () => {
    const before = range(0, 10);
    expect(memoryDelta(before, [...before, m(10), m(11)])).toEqual({ drop: 0, keep: 10, add: [m(10), m(11)] });
    const windowed = [...before.slice(2), m(10), m(11)];
    expect(memoryDelta(before, windowed)).toEqual({ drop: 2, keep: 8, add: [m(10), m(11)] });
  });

  it("equal copies count as the same memory; an edit in the middle sends everything from the edit on", () => {
    const before = range(0, 6);
    const copies = before.map((x) => ({ ...x }));
    expect(memoryDelta(before, [...copies, m(6)])).toEqual({ drop: 0, keep: 6, add: [m(6)] });
    const edited = [...before.slice(0, 3), { ...m(3), content: "changed" }, ...before.slice(4)];
    const delta = memoryDelta(before, edited);
    expect(delta).toEqual({ drop: 0, keep: 3, add: edited.slice(3) });
    expect(applyMemoryDelta("s", before, delta!)).toEqual(edited);
  });

  it("sends the memories whole when nothing is shared, or nothing came before", () => {
    expect(memoryDelta(range(0, 3), range(5, 8))).toBeUndefined();
    expect(memoryDelta(undefined, range(0, 3))).toBeUndefined();
    expect(memoryDelta([], range(0, 3))).toBeUndefined();
  });

  it("gives back exactly the memories it was made from, and refuses one the memories before it cannot satisfy", () => {
    const before = range(0, 30);
    const after = [...before.slice(5, 28), m(30), m(31), m(32)];
    expect(applyMemoryDelta("s", before, memoryDelta(before, after)!)).toEqual(after);
    expect(() => applyMemoryDelta("s", range(0, 4), { drop: 2, keep: 5, add: [] })).toThrow(/soul 's': a turn of its history names memories the record before it does not have \(drop 2, keep 5 of 4\)/);
    expect(() => applyMemoryDelta("s", undefined, { drop: 0, keep: 1, add: [] })).toThrow(/of none/);
  });
});
