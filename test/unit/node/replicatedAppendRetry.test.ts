/**
 * What a failover store sends again (runtime/node/failover/recordAppender.ts): an append that
 * fails because NATS is away is tried again under the same message id, for as long as it takes
 * (the turn waits; a long wait is said in the node's log), until the node stops; a record the
 * log refuses as too large is not (sending it again cannot help), and a turn that large is not
 * committed locally either; a record the history takes for another one stops the soul's commits.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HistoryDuplicateError, HistoryRecordTooLargeError, MAX_HISTORY_RECORD_BYTES, type SoulHistoryLog } from "../../../runtime/bus/index.ts";
import { RecordNotLandedError, ReplicatedActorStore, type ReplicatedStoreHooks } from "../../../runtime/node/failover/index.ts";
import { openStore, type LmdbActorStore, type Store } from "../../../runtime/store/index.ts";
import { sampleState } from "../../support/store/fixtures.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-append-retry-");
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  dirs.cleanup();
});

/** A log whose appends fail as `failures` says, in order, then land; each call's message id kept. */
function flakyLog(failures: Error[]): SoulHistoryLog & { ids: (string | undefined)[] } {
  const ids: (string | undefined)[] = [];
  let seq = 0;
  return {
    ids,
    async append(_soulId, _data, _expected, options) {
      ids.push(options?.msgId);
      const failure = failures.shift();
      if (failure) throw failure;
      return ++seq;
    },
    read: async () => ({ entries: [], lastSeq: 0 }),
    streamSince: async () => [],
  };
}

function storeOn(log: SoulHistoryLog, hooks: Partial<ReplicatedStoreHooks> = {}): ReplicatedActorStore {
  return new ReplicatedActorStore(localSoul(), log, { node: "a", epoch: 1, lease: 1 }, { n: 0, lastSeq: 0 }, { onFenced: () => undefined, ...hooks });
}

function localSoul(): LmdbActorStore {
  const store = openStore({ path: dirs.make(), noSync: true });
  stores.push(store);
  return store.actor("sam");
}

const away = () => new Error("not connected to NATS");

describe("a failover store's appends sent again", () => {
  it("sends an append that failed on the way again, under the same message id", async () => {
    const log = flakyLog([new Error("connection closed")]);
    await storeOn(log).commitTurn({ state: sampleState(1) });
    expect(log.ids).toHaveLength(2);
    expect(log.ids[1]).toBe(log.ids[0]);
  });

  it("sends it again for as long as NATS is away, says so once in the node's log, and the turn resolves once it lands", async () => {
    const log = flakyLog(Array.from({ length: 4 }, away));
    const said: string[] = [];
    await storeOn(log, { patienceMs: 500, say: (line) => said.push(line) }).commitTurn({ state: sampleState(1) });
    expect(log.ids).toHaveLength(5);
    expect(new Set(log.ids).size).toBe(1);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/soul sam: its turn record 1 has not reached the replicated history for \d+ s \(not connected to NATS\); the soul takes no further turn until it has/);
  }, 10_000);

  it("the node stopping ends the wait: the turn fails as not known to have landed, and the soul commits nothing more", async () => {
    const log = flakyLog(Array.from({ length: 1_000 }, away));
    let stopping = false;
    const store = storeOn(log, { keepTrying: () => !stopping });
    const turn = store.commitTurn({ state: sampleState(1) });
    await new Promise((r) => setTimeout(r, 250));
    stopping = true;
    await expect(turn).rejects.toBeInstanceOf(RecordNotLandedError);
    await expect(store.commitTurn({ state: sampleState(2) })).rejects.toBeInstanceOf(RecordNotLandedError);
    expect(log.ids.length).toBeLessThan(10);
  });

  it("a record the history took for another one (a duplicate of a different record) stops the soul's commits", async () => {
    const log = flakyLog([new HistoryDuplicateError("sam", "sam:a:1:1", 7)]);
    const store = storeOn(log);
    await expect(store.commitTurn({ state: sampleState(1) })).rejects.toBeInstanceOf(HistoryDuplicateError);
    await expect(store.commitTurn({ state: sampleState(2) })).rejects.toBeInstanceOf(HistoryDuplicateError);
    expect(log.ids).toHaveLength(1);
  });

  it("a turn too large for the history is not committed locally either: the local copy and the history stay one soul", async () => {
    const log = flakyLog([]);
    const local = localSoul();
    const store = new ReplicatedActorStore(local, log, { node: "a", epoch: 1, lease: 1 }, { n: 0, lastSeq: 0 }, { onFenced: () => undefined });
    await store.commitTurn({ state: sampleState(1) });
    const huge = sampleState(2);
    (huge.soulMemory as Record<string, unknown>).notes = "x".repeat(MAX_HISTORY_RECORD_BYTES);
    await expect(store.commitTurn({ state: huge })).rejects.toBeInstanceOf(HistoryRecordTooLargeError);
    expect(local.loadState()?.turn).toBe(1);
    expect(log.ids).toHaveLength(1);
    // The next turn is the next record.
    await store.commitTurn({ state: sampleState(3) });
    expect(log.ids.at(-1)).toBe("sam:a:1:2");
  });

  it("does not send a record refused as too large again: the commit fails at once with the log's reason", async () => {
    const log = flakyLog([new HistoryRecordTooLargeError("sam", 70_000_000)]);
    await expect(storeOn(log).commitTurn({ state: sampleState(1) })).rejects.toBeInstanceOf(HistoryRecordTooLargeError);
    expect(log.ids).toHaveLength(1);
  });
});
