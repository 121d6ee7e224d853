/**
 * What failover's snapshots carry beside a dump (runtime/node/failover/historyCompaction.ts):
 * the ids of the inbox's done entries, read from one store and recorded as done by a restore
 * in another, so the copy recognises a perception already processed. And the config option
 * that sets how often the snapshots are written.
 */
import { describe, expect, it } from "vitest";
import { parseClusterConfig } from "../../../runtime/node/index.ts";
import { StoreError } from "../../../runtime/store/index.ts";
import { sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

describe("done inbox ids", () => {
  it("lists the done entries only, all of them within the limit, the most recently received beyond it", async () => {
    const actor = stores.open().actor("samantha");
    for (const [i, id] of ["a", "b", "c", "d"].entries()) {
      await actor.receive(id, { content: id });
      if (i < 3) await actor.commitTurn({ state: sampleState(i + 1), inboxDone: id });
    }
    await actor.receive("e", {});
    await actor.markError("e", "boom");
    expect(actor.doneInboxIds(10).sort()).toEqual(["a", "b", "c"]);
    // Received in the same millisecond or not: the later arrival comes first.
    expect(actor.doneInboxIds(2)).toEqual(["c", "b"]);
  });

  it("are recorded as done by a restore, after the dump's own entries, and the next arrival sorts after them", async () => {
    const store = stores.open();
    const from = store.actor("samantha");
    await from.receive("pending-1", { content: "waiting" });
    await from.commitTurn({ state: sampleState(1), inboxRecord: { id: "old-1", perception: { content: "answered" } } });
    const dump = from.dump()!;
    const to = store.actor("copy");
    await to.restore(dump, { done: { ids: [...from.doneInboxIds(100), "pending-1"], at: 1_700_000_000_000 } });
    expect(to.inboxEntry("old-1")).toMatchObject({ status: "done", receivedAt: 1_700_000_000_000, perception: null });
    // An id the dump has as pending stays pending.
    expect(to.pendingInbox().map((e) => e.id)).toEqual(["pending-1"]);
    expect(await to.receive("old-1", { content: "redelivered" })).toBe(false);
    expect(await to.receive("new-1", {})).toBe(true);
    expect(to.inboxEntry("new-1")?.seq).toBe(3);
    await expect(to.restore(dump, { replace: true, done: { ids: [""], at: 1 } })).rejects.toBeInstanceOf(StoreError);
    expect(to.inboxEntry("old-1")?.status).toBe("done"); // nothing written by the refused restore
  });
});

describe("runtime.failover.snapshotEvery", () => {
  const config = (failover: unknown) => parseClusterConfig({ souls: [{ id: "sam", blueprint: "samantha" }], runtime: { failover } }).runtime.failover;
  it("is optional next to leaseMs, and refused below 0", () => {
    expect(config({ leaseMs: 2_000, snapshotEvery: 50 })).toEqual({ leaseMs: 2_000, snapshotEvery: 50 });
    expect(config({ leaseMs: 2_000 })).toEqual({ leaseMs: 2_000 });
    expect(config(true)).toEqual({ leaseMs: 10_000 });
    expect(() => config({ snapshotEvery: -1 })).toThrow();
  });
});
