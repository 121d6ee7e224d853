import fc from "fast-check";
import { pack, unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import { ChatMessageRoleEnum, WorkingMemory, regionOf, type InputMemory, type Memory } from "../../../runtime/cognition/index.ts";

const SOUL = "Samantha";
const REGIONS = ["default", "core", "summary", "notes"] as const;

const roleArb = fc.constantFrom("system", "user", "assistant") as fc.Arbitrary<Memory["role"]>;
const regionArb = fc.constantFrom(...REGIONS);
const inputArb: fc.Arbitrary<InputMemory> = fc.record({
  role: roleArb,
  content: fc.string({ maxLength: 20 }),
  region: regionArb,
});
const regionListArb = fc.uniqueArray(regionArb, { maxLength: 4 });

type Op = { name: string; apply: (wm: WorkingMemory) => WorkingMemory };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  inputArb.map((m) => ({ name: "withMemory", apply: (wm: WorkingMemory) => wm.withMemory(m) })),
  fc.string({ maxLength: 10 }).map((c) => ({ name: "withMonologue", apply: (wm: WorkingMemory) => wm.withMonologue(c) })),
  fc
    .tuple(regionArb, fc.array(inputArb, { maxLength: 3 }))
    .map(([r, ms]) => ({ name: "withRegion", apply: (wm: WorkingMemory) => wm.withRegion(r, ...ms) })),
  regionListArb.map((order) => ({ name: "withRegionalOrder", apply: (wm: WorkingMemory) => wm.withRegionalOrder(...order) })),
  regionListArb.map((rs) => ({ name: "withoutRegions", apply: (wm: WorkingMemory) => wm.withoutRegions(...rs) })),
  regionListArb.map((rs) => ({ name: "withOnlyRegions", apply: (wm: WorkingMemory) => wm.withOnlyRegions(...rs) })),
  fc
    .tuple(fc.integer({ min: -5, max: 5 }), fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }))
    .map(([a, b]) => ({ name: "slice", apply: (wm: WorkingMemory) => wm.slice(a, b) })),
  roleArb.map((role) => ({ name: "filter", apply: (wm: WorkingMemory) => wm.filter((m) => m.role !== role) })),
  fc.constant({ name: "map", apply: (wm: WorkingMemory) => wm.map((m) => ({ ...m, content: m.content.toUpperCase() })) }),
  fc.array(inputArb, { maxLength: 3 }).map((ms) => ({ name: "concat", apply: (wm: WorkingMemory) => wm.concat(ms) })),
  fc.array(inputArb, { maxLength: 3 }).map((ms) => ({ name: "prepend", apply: (wm: WorkingMemory) => wm.prepend(ms) })),
);

const memoryArb = fc
  .record({
    soulName: fc.string({ minLength: 1, maxLength: 10 }),
    memories: fc.array(inputArb, { maxLength: 8 }),
    regionOrder: fc.option(regionListArb, { nil: undefined }),
  })
  .map((init) => new WorkingMemory(init));

function snapshot(wm: WorkingMemory) {
  return structuredClone({ memories: [...wm.memories], regionOrder: [...wm.regionOrder], soulName: wm.soulName });
}

/** Region ranks must never decrease along the memories when an order is set. */
function isGrouped(wm: WorkingMemory): boolean {
  const order = wm.regionOrder;
  if (order.length === 0) return true;
  const rank = (m: Memory) => {
    const i = order.indexOf(regionOf(m));
    return i < 0 ? order.length : i;
  };
  return wm.memories.every((m, i, all) => i === 0 || rank(all[i - 1]) <= rank(m));
}

describe("WorkingMemory properties", () => {
  it("no operation changes the memory it was called on", () => {
    fc.assert(
      fc.property(memoryArb, fc.array(opArb, { maxLength: 12 }), (start, ops) => {
        const seen: Array<[WorkingMemory, ReturnType<typeof snapshot>]> = [[start, snapshot(start)]];
        let wm = start;
        for (const op of ops) {
          wm = op.apply(wm);
          seen.push([wm, snapshot(wm)]);
        }
        for (const [m, before] of seen) expect(snapshot(m)).toEqual(before);
      }),
      { numRuns: 200 },
    );
  });

  it("exposes frozen memories and region order", () => {
    const wm = new WorkingMemory({ soulName: SOUL, memories: [{ role: "user", content: "hi" }], regionOrder: ["core"] });
    expect(Object.isFrozen(wm.memories)).toBe(true);
    expect(Object.isFrozen(wm.regionOrder)).toBe(true);
    expect(Object.isFrozen(wm.memories[0])).toBe(true);
    expect(() => (wm.memories as Memory[]).push({ id: "x", role: "user", content: "", timestamp: 0 })).toThrow();
  });

  it("withRegionalOrder groups memories by region in that order, stable inside each region", () => {
    fc.assert(
      fc.property(fc.array(inputArb, { maxLength: 15 }), regionListArb, (inputs, order) => {
        const before = new WorkingMemory({ soulName: SOUL, memories: inputs });
        const after = before.withRegionalOrder(...order);
        expect(isGrouped(after)).toBe(true);
        expect(after.regionOrder).toEqual(order);
        expect(after.length).toBe(before.length);
        // Stable: each region's memories (and the unnamed regions' memories) keep their relative order.
        const ids = (wm: WorkingMemory, keep: (r: string) => boolean) =>
          wm.memories.filter((m) => keep(regionOf(m))).map((m) => m.id);
        for (const r of REGIONS) expect(ids(after, (x) => x === r)).toEqual(ids(before, (x) => x === r));
        const named: readonly string[] = order;
        const unnamed = (x: string) => !named.includes(x);
        expect(ids(after, unnamed)).toEqual(ids(before, unnamed));
        // Named regions come first, in the order given.
        const firstSeen = [...new Set(after.memories.map(regionOf))].filter((r) => named.includes(r));
        expect(firstSeen).toEqual(named.filter((r) => firstSeen.includes(r)));
      }),
      { numRuns: 200 },
    );
  });

  it("keeps the regional order through every later operation", () => {
    fc.assert(
      fc.property(memoryArb, regionListArb, fc.array(opArb, { maxLength: 10 }), (start, order, ops) => {
        fc.pre(order.length > 0);
        let wm = start.withRegionalOrder(...order);
        for (const op of ops) {
          if (op.name === "withRegionalOrder") continue;
          wm = op.apply(wm);
          expect(isGrouped(wm), `after ${op.name}`).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("setting a region re-applies the order", () => {
    fc.assert(
      fc.property(fc.array(inputArb, { maxLength: 10 }), regionListArb, regionArb, fc.array(inputArb, { maxLength: 3 }), (inputs, order, region, incoming) => {
        const wm = new WorkingMemory({ soulName: SOUL, memories: inputs }).withRegionalOrder(...order);
        const next = wm.withRegion(region, ...incoming);
        expect(isGrouped(next)).toBe(true);
        expect(next.memories.filter((m) => regionOf(m) === region).map((m) => m.content)).toEqual(incoming.map((m) => m.content));
      }),
      { numRuns: 200 },
    );
  });

  it("a new region lands just before the first default memory", () => {
    const otherRegionArb = fc.record({ role: roleArb, content: fc.string({ maxLength: 5 }), region: fc.constantFrom("default", "core", "summary") });
    fc.assert(
      fc.property(fc.array(otherRegionArb, { maxLength: 10 }), fc.array(inputArb, { minLength: 1, maxLength: 3 }), (inputs, incoming) => {
        const wm = new WorkingMemory({ soulName: SOUL, memories: inputs });
        const next = wm.withRegion("fresh", ...incoming);
        const regions = next.memories.map(regionOf);
        const at = regions.indexOf("fresh");
        const firstDefault = wm.memories.findIndex((m) => regionOf(m) === "default");
        expect(at).toBe(firstDefault >= 0 ? firstDefault : wm.length);
        expect(regions.slice(at, at + incoming.length).every((r) => r === "fresh")).toBe(true);
        // Everything else is where it was.
        expect(next.memories.filter((m) => regionOf(m) !== "fresh").map((m) => m.id)).toEqual(wm.memories.map((m) => m.id));
      }),
    );
  });

  const richMemoryArb: fc.Arbitrary<InputMemory> = fc.record(
    {
      id: fc.uuid(),
      role: roleArb,
      content: fc.string({ unit: "grapheme", maxLength: 40 }),
      name: fc.string({ minLength: 1, maxLength: 8 }),
      region: regionArb,
      // Normalised through JSON once so -0 (which JSON writes as 0) does not count as a loss.
      // `__proto__` keys are refused by toMemory (msgpack would rename them); see the test below.
      metadata: fc
        .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }))
        .map((m) => JSON.parse(JSON.stringify(m)) as Record<string, unknown>)
        .filter((m) => !JSON.stringify(m).includes('"__proto__"')),
      timestamp: fc.integer({ min: 0, max: 2 ** 47 }),
    },
    { requiredKeys: ["id", "role", "content", "timestamp"] },
  );
  const serialArb = fc
    .record({ soulName: fc.string({ minLength: 1, maxLength: 10 }), memories: fc.array(richMemoryArb, { maxLength: 8 }), regionOrder: regionListArb })
    .map((init) => new WorkingMemory(init));

  function expectSame(a: WorkingMemory, b: WorkingMemory) {
    expect(b.soulName).toBe(a.soulName);
    expect(b.regionOrder).toEqual(a.regionOrder);
    expect(b.memories).toEqual(a.memories);
    expect(b.toJSON()).toEqual(a.toJSON());
  }

  it("round-trips through JSON with no loss", () => {
    fc.assert(
      fc.property(serialArb, (wm) => {
        const back = WorkingMemory.fromJSON(JSON.parse(JSON.stringify(wm)));
        expectSame(wm, back);
      }),
      { numRuns: 200 },
    );
  });

  it("refuses metadata with a __proto__ key, which msgpack would rename in LMDB", () => {
    const nested = JSON.parse('{"a":{"__proto__":1}}') as Record<string, unknown>;
    expect(() => new WorkingMemory({ soulName: SOUL, memories: [{ role: "user", content: "x", metadata: nested }] })).toThrow(
      /metadata\.a has a "__proto__" key/,
    );
    const top = JSON.parse('{"__proto__":0}') as Record<string, unknown>;
    expect(() => new WorkingMemory({ soulName: SOUL }).withMemory({ role: "user", content: "x", metadata: top })).toThrow(/__proto__/);
    // The reason for the rule: msgpack's decoder does change such a key.
    expect(Object.keys(unpack(pack(top)) as object)).not.toEqual(["__proto__"]);
  });

  it("round-trips through msgpack with no loss", () => {
    fc.assert(
      fc.property(serialArb, (wm) => {
        const back = WorkingMemory.fromJSON(unpack(pack(wm.toJSON())));
        expectSame(wm, back);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("WorkingMemory methods", () => {
  const base = new WorkingMemory({
    soulName: SOUL,
    memories: [
      { id: "a", role: "system", content: "core", region: "core", timestamp: 1 },
      { id: "b", role: "user", content: "hello", timestamp: 2 },
      { id: "c", role: "assistant", content: "hi there", timestamp: 3 },
      { id: "d", role: "user", content: "bye", timestamp: 4, metadata: { n: 1 } },
    ],
  });
  const ids = (wm: WorkingMemory) => wm.memories.map((m) => m.id);

  it("length, at, find, some", () => {
    expect(base.length).toBe(4);
    expect(base.at(0)?.id).toBe("a");
    expect(base.at(-1)?.id).toBe("d");
    expect(base.at(9)).toBeUndefined();
    expect(base.find((m) => m.role === "user")?.id).toBe("b");
    expect(base.find((m) => m.content === "none")).toBeUndefined();
    expect(base.some((m) => m.metadata?.n === 1)).toBe(true);
    expect(base.some((m) => m.role === "assistant" && m.content === "bye")).toBe(false);
  });

  it("slice, filter, map", () => {
    expect(ids(base.slice(1, 3))).toEqual(["b", "c"]);
    expect(ids(base.slice(-2))).toEqual(["c", "d"]);
    expect(ids(base.filter((m) => m.role === "user"))).toEqual(["b", "d"]);
    const upper = base.map((m) => ({ ...m, content: m.content.toUpperCase() }));
    expect(upper.memories.map((m) => m.content)).toEqual(["CORE", "HELLO", "HI THERE", "BYE"]);
    expect(ids(upper)).toEqual(ids(base));
    expect(upper.soulName).toBe(SOUL);
  });

  it("asyncMap awaits every mapping", async () => {
    const mapped = await base.asyncMap(async (m, i) => {
      await new Promise((r) => setTimeout(r, 4 - i));
      return { ...m, content: `${i}:${m.content}` };
    });
    expect(mapped.memories.map((m) => m.content)).toEqual(["0:core", "1:hello", "2:hi there", "3:bye"]);
  });

  it("concat and prepend accept memories or another WorkingMemory", () => {
    const other = new WorkingMemory({ soulName: "Other", memories: [{ id: "x", role: "user", content: "x" }] });
    expect(ids(base.concat(other))).toEqual(["a", "b", "c", "d", "x"]);
    expect(ids(base.concat([{ id: "y", role: "user", content: "y" }]))).toEqual(["a", "b", "c", "d", "y"]);
    expect(ids(base.prepend(other))).toEqual(["x", "a", "b", "c", "d"]);
    expect(ids(base.prepend([{ id: "y", role: "user", content: "y" }]))).toEqual(["y", "a", "b", "c", "d"]);
    expect(base.concat(other).soulName).toBe(SOUL);
  });

  it("withoutRegions and withOnlyRegions", () => {
    expect(ids(base.withoutRegions("core"))).toEqual(["b", "c", "d"]);
    expect(ids(base.withOnlyRegions("core"))).toEqual(["a"]);
    expect(ids(base.withOnlyRegions("default"))).toEqual(["b", "c", "d"]);
    expect(ids(base.withoutRegions("default", "core"))).toEqual([]);
  });

  it("withMonologue adds an assistant memory", () => {
    const next = base.withMonologue("Samantha thought: hmm");
    expect(next.length).toBe(5);
    expect(next.at(-1)).toMatchObject({ role: ChatMessageRoleEnum.Assistant, content: "Samantha thought: hmm" });
    expect(base.length).toBe(4);
  });

  it("withRegion replaces a region in place", () => {
    const next = base.withRegion("core", { role: "system", content: "new core 1" }, { role: "system", content: "new core 2" });
    expect(next.memories.map((m) => m.content)).toEqual(["new core 1", "new core 2", "hello", "hi there", "bye"]);
    expect(next.memories.slice(0, 2).every((m) => m.region === "core")).toBe(true);
  });

  it("fills in ids and timestamps, and keeps given ones", () => {
    const wm = new WorkingMemory({ soulName: SOUL }).withMemory({ role: "user", content: "x" });
    expect(wm.at(0)?.id).toMatch(/[0-9a-f-]{36}/);
    expect(typeof wm.at(0)?.timestamp).toBe("number");
    expect(base.at(0)).toMatchObject({ id: "a", timestamp: 1 });
  });
});

describe("pending WorkingMemory", () => {
  function deferred<T>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  it("chains on a pending memory and settles in order", async () => {
    const d = deferred<WorkingMemory>();
    const pending = WorkingMemory.pending(SOUL, d.promise);
    const chained = pending.withMemory({ role: "user", content: "after" }).slice(-2).map((m) => ({ ...m, content: `${m.content}!` }));
    expect(pending.isPending).toBe(true);
    expect(chained.isPending).toBe(true);
    d.resolve(new WorkingMemory({ soulName: SOUL, memories: [{ role: "system", content: "a" }, { role: "assistant", content: "streamed" }] }));
    await chained.finished;
    expect(chained.isPending).toBe(false);
    expect(chained.memories.map((m) => m.content)).toEqual(["streamed!", "after!"]);
    expect(pending.memories.map((m) => m.content)).toEqual(["a", "streamed"]);
  });

  it("reading before the stream finished throws a clear error", () => {
    const pending = WorkingMemory.pending(SOUL, new Promise<WorkingMemory>(() => undefined));
    expect(() => pending.memories).toThrow(/still streaming: await memory\.finished/);
    expect(() => pending.length).toThrow(/still streaming/);
    expect(() => pending.toJSON()).toThrow(/still streaming/);
    expect(() => pending.withMemory({ role: "user", content: "x" }).at(0)).toThrow(/still streaming/);
  });

  it("finished rejects when the stream failed, and so do memories chained on it", async () => {
    const d = deferred<WorkingMemory>();
    const pending = WorkingMemory.pending(SOUL, d.promise);
    const chained = pending.withMonologue("later");
    d.reject(new Error("stream broke"));
    await expect(pending.finished).rejects.toThrow("stream broke");
    await expect(chained.finished).rejects.toThrow("stream broke");
    expect(() => pending.memories).toThrow("stream broke");
  });

  it("asyncMap waits for a pending memory", async () => {
    const d = deferred<WorkingMemory>();
    const pending = WorkingMemory.pending(SOUL, d.promise);
    const mapped = pending.asyncMap(async (m) => ({ ...m, content: m.content.toUpperCase() }));
    d.resolve(new WorkingMemory({ soulName: SOUL, memories: [{ role: "assistant", content: "x" }] }));
    expect((await mapped).memories[0].content).toBe("X");
  });
});
