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
async function rawRecords(path: string, actorId: string): Promise<{ stateBytes: number; memoryKeys: unknown[] }> {
  const root = open({ ...lmdbOptions({ path }), readOnly: true });
  try {
    const state = root.openDB({ name: "state" });
    const memories = root.openDB({ name: "memories" });
    return {
      stateBytes: state.getBinary([actorId])?.length ?? 0,
      memoryKeys: [...memories.getKeys({ start: [actorId], end: [actorId, "\uffff"] })],
    };
  } finally {
    await root.close();
  }
}

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

  it("rewrites from the first changed memory and removes what a shorter memory dropped", async () => {
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
    expect(raw.memoryKeys).toEqual(second.map((_, i) => ["claudius", i]));
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
    type Op = { kind: "append"; n: number } | { kind: "edit"; at: number } | { kind: "truncate"; to: number } | { kind: "slide"; by: number } | { kind: "reopen" } | { kind: "copy" };
    const op: fc.Arbitrary<Op> = fc.oneof(
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
          // Equal copies, as a JSON round trip gives: the same memories, other objects.
          if (o.kind === "copy") model = model.map((m) => ({ ...(m as object) }));
          await store.actor("prop").commitTurn({ state: stateWith(model, ++turn) });
          expect((store.actor("prop").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(model);
        }
        await store.close();
        expect((stores.open({ path }).actor("prop").loadState()?.workingMemory as { memories: unknown[] } | undefined)?.memories ?? []).toEqual(model);
      }),
      { numRuns: 40 },
    );
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
