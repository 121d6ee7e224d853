/**
 * What a failover store sends again (runtime/node/failover/replicatedActorStore.ts): an append
 * that fails because NATS is away is tried again under the same message id; a record the log
 * refuses as too large is not (sending it again cannot help), so its commit fails at once,
 * with the log's reason, instead of after a minute of retries.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HistoryRecordTooLargeError, type SoulHistoryLog } from "../../../runtime/bus/index.ts";
import { ReplicatedActorStore } from "../../../runtime/node/failover/replicatedActorStore.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
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
    read: async () => [],
    streamSince: async () => [],
    purgeBefore: async () => 0,
  };
}

function storeOn(log: SoulHistoryLog): ReplicatedActorStore {
  const store = openStore({ path: dirs.make(), noSync: true });
  stores.push(store);
  return new ReplicatedActorStore(store.actor("sam"), log, { node: "a", epoch: 1, lease: 1 }, { n: 0, lastSeq: 0 }, () => undefined);
}

describe("a failover store's appends sent again", () => {
  it("sends an append that failed on the way again, under the same message id", async () => {
    const log = flakyLog([new Error("connection closed")]);
    await storeOn(log).commitTurn({ state: sampleState(1) });
    expect(log.ids).toHaveLength(2);
    expect(log.ids[1]).toBe(log.ids[0]);
  });

  it("does not send a record refused as too large again: the commit fails at once with the log's reason", async () => {
    const log = flakyLog([new HistoryRecordTooLargeError("sam", 70_000_000)]);
    await expect(storeOn(log).commitTurn({ state: sampleState(1) })).rejects.toBeInstanceOf(HistoryRecordTooLargeError);
    expect(log.ids).toHaveLength(1);
  });
});
