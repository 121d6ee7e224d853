import { describe, expect, it } from "vitest";
import { StoreError } from "../../../runtime/store/index.ts";
import { MDB_MAP_FULL, translateError } from "../../../runtime/store/lmdbErrors.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();
const MAP_SIZE = 1024 * 1024;

describe("a full map", () => {
  it("fails the write with a clear StoreError, writes nothing of it, and a bigger mapSize fixes it", async () => {
    const store = stores.open({ mapSize: MAP_SIZE });
    const actor = store.actor("hoarder");
    const blob = (turn: number) => ({ ...sampleState(turn), soulMemory: { blob: `${turn}:`.padEnd(48 * 1024, "x") } });

    let turn = 0;
    let failure: unknown;
    while (turn < 200) {
      const next = turn + 1;
      await actor.receive(`p-${next}`, { n: next });
      try {
        // Keep every state in the kv as well, so the data only grows.
        await actor.kv("history").put(next, blob(next));
        await actor.commitTurn({ state: blob(next), inboxDone: `p-${next}`, outbox: [sampleOutbox(next)] });
      } catch (error) {
        failure = error;
        break;
      }
      turn = next;
    }
    expect(turn).toBeGreaterThan(3);
    expect(failure).toBeInstanceOf(StoreError);
    const message = (failure as Error).message;
    expect(message).toBe(`LMDB map is full at ${store.path} (mapSize ${MAP_SIZE} bytes); raise store.mapSize`);
    expect(store.usedBytes()).toBeLessThanOrEqual(MAP_SIZE);

    // Nothing half-written: the last good turn is intact and the failed one left no trace.
    expect(actor.loadState()).toEqual(blob(turn));
    expect(actor.inboxEntry(`p-${turn}`)?.status).toBe("done");
    expect(actor.inboxEntry(`p-${turn + 1}`)?.status).toBe("pending");
    expect(actor.pendingOutbox().map((e) => e.id)).toEqual(Array.from({ length: turn }, (_, i) => sampleOutbox(i + 1).id));
    // Reads still work, and so do deletes: that is how room is made.
    await actor.ackOutbox(sampleOutbox(1).id);
    await store.close();

    const bigger = stores.open({ mapSize: 16 * MAP_SIZE }).actor("hoarder");
    expect(bigger.loadState()).toEqual(blob(turn));
    await bigger.commitTurn({ state: blob(turn + 1), inboxDone: `p-${turn + 1}` });
    expect(bigger.loadState()?.turn).toBe(turn + 1);
  });

  it("refuses concurrent writes that together would overflow, not just each alone", async () => {
    const store = stores.open({ mapSize: MAP_SIZE });
    const actor = store.actor("burst");
    const big = "y".padEnd(200 * 1024, "y");
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => actor.kv("k").put(i, big)));
    const rejected = results.filter((r) => r.status === "rejected");
    expect(rejected.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThan(0);
    for (const r of rejected) expect((r as PromiseRejectedResult).reason.message).toMatch(/LMDB map is full/);
    expect(store.usedBytes()).toBeLessThanOrEqual(MAP_SIZE);
  });

  it("an MDB_MAP_FULL from LMDB itself gets the same message", () => {
    const lmdbError = Object.assign(new Error("MDB_MAP_FULL: Environment mapsize limit reached"), { code: MDB_MAP_FULL });
    const translated = translateError(lmdbError, "commitTurn", "/data/.ensoul", () => 4096);
    expect(translated).toBeInstanceOf(StoreError);
    expect(translated.message).toBe("LMDB map is full at /data/.ensoul (mapSize 4096 bytes); raise store.mapSize");
    expect(translated.cause).toBe(lmdbError);
  });
});
