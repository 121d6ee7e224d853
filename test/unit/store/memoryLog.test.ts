import fc from "fast-check";
import { open } from "lmdb";
import { describe, expect, it } from "vitest";
import { lmdbOptions } from "../../../runtime/store/environment.ts";
import type { ActorState, Store } from "../../../runtime/store/index.ts";
import { sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

let made = 0;
const memory = (content: string) => Object.freeze({ id: `m${made++}`, role: "user", content, timestamp: 1_700_000_000_000 + made });

function stateWith(memories: readonly unknown[], turn: number): ActorState {
  return { ...sampleState(turn), workingMemory: { soulName: "Samantha", memories: [...memories], regionOrder: ["core", "default"] } };
}

/** The raw LMDB records, read with lmdb-js directly once the store is closed. */
async function rawRecords(path: string, actorId: string): Promise<{ stateBytes: number; memoryKeys: unknown[]; values: Map<number, unknown>; runs: unknown[] }> {
  const root = open({ ...lmdbOptions({ path }), readOnly: true });
  try {
    const state = root.openDB({ name: "state" });
    const memories = root.openDB({ name: "memories" });
    const range = [...memories.getRange({ start: [actorId], end: [actorId, "\uffff"] })];
    const record = state.get([actorId]) as { workingMemory?: { memoryRuns?: unknown[] } } | undefined;
    return {
      stateBytes: state.getBinary([actorId])?.length ?? 0,
      memoryKeys: range.map((r) => r.key),
      values: new Map(range.map((r) => [(r.key as [string, number])[1], r.value])),
      runs: record?.workingMemory?.memoryRuns ?? [],
    };
  } finally {
    await root.close();
  }
}

const highestSlot = (keys: unknown[]) => Math.max(...keys.map((k) => (k as [string, number])[1]));

describe("working memory as a log", () => {
  it("keeps the state record the same size however long the conversation grows, and loads every memory back", async () => {
    const path = stores.dir();
    let store: Store = stores.open({ path });
    let memories: unknown[] = [];
    const sizes: number[] = [];
    for (let turn = 1; turn <= 300; turn++) {
      memories = [...memories, memory(`said ${turn}`), memory(`answered ${turn}`)];
      await store.actor("samantha").commitTurn({ state: stateWith(memories, turn) });
      if (turn === 10 || turn === 300) {
        await store.close();
        sizes.push((await rawRecords(path, "samantha")).stateBytes);
        store = stores.open({ path });
      }
    }
    // 290 turns later the record has grown only by digits, not by 580 memories.
    expect(sizes[1]).toBeLessThan(sizes[0] + 16);
    expect((store.actor("samantha").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(memories);
  });

  it("writes only a changed memory, keeps the others where they are, and removes what was dropped", async () => {
    const path = stores.dir();
    const store = stores.open({ path });
    const actor = store.actor("claudius");
    const first = Array.from({ length: 8 }, (_, i) => memory(`m ${i}`));
    await actor.commitTurn({ state: stateWith(first, 1) });
    // A window that drops the oldest three and changes one in the middle.
    const second = [...first.slice(3, 5), memory("rewritten"), ...first.slice(6)];
    await actor.commitTurn({ state: stateWith(second, 2) });
    expect((actor.loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(second);
    await store.close();
    const raw = await rawRecords(path, "claudius");
    // Slots 3, 4, 6 and 7 are untouched; the rewritten memory is new slot 8; 0, 1, 2 and 5 are gone.
    expect(raw.memoryKeys).toEqual([3, 4, 6, 7, 8].map((slot) => ["claudius", slot]));
    expect(raw.values.get(8)).toEqual(second[2]);
  });

  it("keeps a soul that holds a window (context first, the oldest conversation dropped each turn) at one write per new memory", async () => {
    const path = stores.dir();
    let store = stores.open({ path });
    const context: unknown[] = [memory("persona"), memory("user model")];
    let conversation: unknown[] = [];
    const WINDOW = 20;
    let highestAt30 = 0;
    for (let turn = 1; turn <= 60; turn++) {
      conversation = [...conversation, memory(`said ${turn}`), memory(`answered ${turn}`)].slice(-WINDOW);
      await store.actor("claudius").commitTurn({ state: stateWith([...context, ...conversation], turn) });
      if (turn === 30 || turn === 45) {
        // Reopened, the log carries on from what it reads back.
        await store.close();
        if (turn === 30) highestAt30 = highestSlot((await rawRecords(path, "claudius")).memoryKeys);
        store = stores.open({ path });
        // As a soul does: it goes on from the memories it restored, not from the objects it had.
        const restored = (store.actor("claudius").loadState()?.workingMemory as { memories: unknown[] }).memories;
        context.splice(0, context.length, ...restored.slice(0, context.length));
        conversation = restored.slice(context.length);
      }
    }
    expect((store.actor("claudius").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual([...context, ...conversation]);
    await store.close();
    const raw = await rawRecords(path, "claudius");
    // The records are exactly the window, and 30 turns of sliding wrote two memories a turn: slots grew by 60, not by 60 × 22.
    expect(raw.memoryKeys).toHaveLength(context.length + WINDOW);
    expect(highestSlot(raw.memoryKeys) - highestAt30).toBe(60);
    expect(raw.runs.length).toBeLessThanOrEqual(2);
  });

  it("loads a state an older version wrote inline, and moves its memories into the log on the next commit", async () => {
    const path = stores.dir();
    const inline = stateWith([memory("from before"), memory("the upgrade")], 4);
    {
      const root = open(lmdbOptions({ path }));
      await root.openDB({ name: "state" }).put(["old"], inline);
      await root.close();
    }
    const store = stores.open({ path });
    const actor = store.actor("old");
    expect(actor.loadState()).toEqual(inline);
    const next = [...(inline.workingMemory as { memories: unknown[] }).memories, memory("after the upgrade")];
    await actor.commitTurn({ state: stateWith(next, 5) });
    await store.close();
    expect((await rawRecords(path, "old")).memoryKeys).toHaveLength(3);
    expect((stores.open({ path }).actor("old").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(next);
  });

  it("loads the layout that kept memories at slots 0..count-1, and carries on from it", async () => {
    const path = stores.dir();
    const kept = [memory("one"), memory("two"), memory("three")];
    {
      const root = open(lmdbOptions({ path }));
      const { memories: _m, ...header } = stateWith(kept, 3).workingMemory as { memories: unknown[] };
      await root.openDB({ name: "state" }).put(["counted"], { ...stateWith(kept, 3), workingMemory: { ...header, memoryCount: 3 } });
      for (const [i, m] of kept.entries()) await root.openDB({ name: "memories" }).put(["counted", i], m);
      await root.close();
    }
    const store = stores.open({ path });
    const restored = (store.actor("counted").loadState()?.workingMemory as { memories: unknown[] }).memories;
    expect(restored).toEqual(kept);
    await store.actor("counted").commitTurn({ state: stateWith([...restored.slice(1), memory("four")], 4) });
    await store.close();
    const raw = await rawRecords(path, "counted");
    expect(raw.memoryKeys).toEqual([1, 2, 3].map((slot) => ["counted", slot]));
    expect(raw.runs).toEqual([[1, 3]]);
  });

  it("refuses a state record whose slot runs are malformed, on load and on commit, rather than reuse slots that hold memories", async () => {
    const path = stores.dir();
    {
      const root = open(lmdbOptions({ path }));
      const { memories: _m, ...header } = stateWith([], 1).workingMemory as { memories: unknown[] };
      await root.openDB({ name: "state" }).put(["broken"], { ...stateWith([], 1), workingMemory: { ...header, memoryCount: 2, memoryRuns: [[0, "two"]] } });
      await root.close();
    }
    const store = stores.open({ path });
    expect(() => store.actor("broken").loadState()).toThrow(/malformed memoryRuns/);
    await expect(store.actor("broken").commitTurn({ state: stateWith([memory("new")], 2) })).rejects.toThrow(/malformed memoryRuns/);
  });

  it("stays right when a commit fails: nothing of it lands, and the next commit writes what the log lacks", async () => {
    const store = stores.open();
    const actor = store.actor("samantha");
    const base = [memory("a"), memory("b")];
    await actor.commitTurn({ state: stateWith(base, 1) });
    const failed = [...base, memory("c"), memory("d")];
    // A schedule msgpack cannot encode fails the whole transaction after the memories were put.
    await expect(actor.commitTurn({ state: stateWith(failed, 2), schedulesPut: [{ id: "s", at: 1, process: "p", perception: { huge: 2n ** 80n } }] })).rejects.toThrow(
      /too large/,
    );
    expect((actor.loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(base);
    const next = [...base, memory("e")];
    await actor.commitTurn({ state: stateWith(next, 2) });
    expect((actor.loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(next);
  });

  it("matches a model over any sequence of appends, edits, truncations, window slides and reopenings", async () => {
    type Op =
      | { kind: "append"; n: number }
      | { kind: "edit"; at: number }
      | { kind: "truncate"; to: number }
      | { kind: "slide"; by: number }
      | { kind: "dropMiddle"; at: number; n: number }
      | { kind: "repeat"; at: number }
      | { kind: "reopen" }
      | { kind: "copy" };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("dropMiddle" as const), at: fc.nat(20), n: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constant("repeat" as const), at: fc.nat(20) }),
      fc.record({ kind: fc.constant("append" as const), n: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constant("edit" as const), at: fc.nat(20) }),
      fc.record({ kind: fc.constant("truncate" as const), to: fc.nat(20) }),
      fc.record({ kind: fc.constant("slide" as const), by: fc.integer({ min: 1, max: 5 }) }),
      fc.record({ kind: fc.constant("reopen" as const) }),
      fc.record({ kind: fc.constant("copy" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const path = stores.dir() + `/p${made++}`;
        let store = stores.open({ path });
        let model: unknown[] = [];
        let turn = 0;
        for (const o of ops) {
          if (o.kind === "reopen") {
            await store.close();
            store = stores.open({ path });
            continue;
          }
          if (o.kind === "append") model = [...model, ...Array.from({ length: o.n }, (_, i) => memory(`new ${i}`))];
          if (o.kind === "edit" && model.length) model = model.map((m, i) => (i === o.at % model.length ? memory("edited") : m));
          if (o.kind === "truncate") model = model.slice(0, o.to);
          if (o.kind === "slide") model = model.slice(o.by);
          // Claudius's trim: the context stays, the oldest conversation goes.
          if (o.kind === "dropMiddle" && model.length) model = [...model.slice(0, o.at % model.length), ...model.slice((o.at % model.length) + o.n)];
          // The same object at two places.
          if (o.kind === "repeat" && model.length) model = [...model, model[o.at % model.length]];
          // Equal copies, as a JSON round trip gives: the same memories, other objects.
          if (o.kind === "copy") model = model.map((m) => ({ ...(m as object) }));
          await store.actor("prop").commitTurn({ state: stateWith(model, ++turn) });
          expect((store.actor("prop").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(model);
        }
        await store.close();
        expect((stores.open({ path }).actor("prop").loadState()?.workingMemory as { memories: unknown[] } | undefined)?.memories ?? []).toEqual(model);
      }),
      { numRuns: 60 },
    );
  });

  it("gathers memories scattered by many edits back into one run", async () => {
    const path = stores.dir();
    const store = stores.open({ path });
    const actor = store.actor("scattered");
    let memories = Array.from({ length: 80 }, (_, i) => memory(`m ${i}`));
    await actor.commitTurn({ state: stateWith(memories, 1) });
    // Every other memory edited: 80 slots in 80 runs, more than the record should carry.
    memories = memories.map((m, i) => (i % 2 ? memory(`edited ${i}`) : m));
    await actor.commitTurn({ state: stateWith(memories, 2) });
    await store.close();
    const raw = await rawRecords(path, "scattered");
    expect(raw.runs).toHaveLength(1);
    expect(raw.memoryKeys).toHaveLength(80);
    expect((stores.open({ path }).actor("scattered").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(memories);
  });

  it("gives the state without its memories from one record, never reading the log", async () => {
    const path = stores.dir();
    const memories = Array.from({ length: 50 }, (_, i) => memory(`m ${i}`));
    {
      const store = stores.open({ path });
      await store.actor("long").commitTurn({ state: stateWith(memories, 7) });
      await store.close();
    }
    // Take the log away: a header read does not notice, a full read does.
    {
      const root = open(lmdbOptions({ path }));
      const log = root.openDB({ name: "memories" });
      for (const key of [...log.getKeys({ start: ["long"], end: ["long", "\uffff"] })]) await log.remove(key);
      await root.close();
    }
    const store = stores.open({ path });
    const header = store.actor("long").loadStateHeader();
    expect(header).toMatchObject({ turn: 7, currentProcess: sampleState(7).currentProcess });
    expect(header).not.toHaveProperty("workingMemory");
    expect(() => store.actor("long").loadState()).toThrow(/incomplete/);
    expect(store.actor("nobody").loadStateHeader()).toBeUndefined();
  });

  it("leaves nothing of an actor's log behind when it is destroyed", async () => {
    const path = stores.dir();
    const store = stores.open({ path });
    await store.actor("gone").commitTurn({ state: stateWith([memory("x"), memory("y")], 1) });
    await store.actor("gone").destroy();
    expect(store.actor("gone").loadState()).toBeUndefined();
    await store.actor("gone").commitTurn({ state: stateWith([memory("z")], 1) });
    expect((store.actor("gone").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual([expect.objectContaining({ content: "z" })]);
    await store.close();
    expect((await rawRecords(path, "gone")).memoryKeys).toHaveLength(1);
  });
});
