import { describe, expect, it } from "vitest";
import { StoreError, type TurnCommit } from "../../../runtime/store/index.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

describe("commitTurn", () => {
  it("survives closing and reopening the environment, identical", async () => {
    const first = stores.open();
    const actor = first.actor("samantha");
    expect(actor.loadState()).toBeUndefined();
    await actor.receive("p-1", { action: "said", content: "hello", name: "Ada" });
    const commit: TurnCommit = {
      state: sampleState(1),
      inboxDone: "p-1",
      outbox: [sampleOutbox(1, 0), sampleOutbox(1, 1)],
      schedulesPut: [{ id: "s-1", at: 1_800_000_000_000, process: "followUp", perception: { action: "tick" }, params: { n: 1 } }],
    };
    await actor.commitTurn(commit);
    // Visible to synchronous reads as soon as the promise resolves.
    expect(actor.loadState()).toEqual(commit.state);
    await first.close();

    const reopened = stores.open().actor("samantha");
    expect(reopened.loadState()).toEqual(commit.state);
    expect(reopened.inboxEntry("p-1")).toMatchObject({ id: "p-1", status: "done", attempts: 1, perception: { content: "hello" } });
    expect(reopened.pendingInbox()).toEqual([]);
    expect(reopened.pendingOutbox()).toEqual(commit.outbox);
    expect(reopened.schedules()).toEqual(commit.schedulesPut);
  });

  it("also resolves under durability: flush, after the fsync", async () => {
    const actor = stores.open({ durability: "flush" }).actor("flushy");
    await actor.commitTurn({ state: sampleState(3) });
    expect(actor.loadState()?.turn).toBe(3);
  });

  it("replaces the state turn after turn", async () => {
    const actor = stores.open().actor("samantha");
    for (let turn = 1; turn <= 5; turn++) await actor.commitTurn({ state: sampleState(turn) });
    expect(actor.loadState()).toEqual(sampleState(5));
  });

  it("refuses a malformed commit with a StoreError before writing", async () => {
    const actor = stores.open().actor("samantha");
    await expect(actor.commitTurn({ state: { ...sampleState(1), turn: -1 } })).rejects.toThrow(/state\.turn must be a non-negative integer/);
    await expect(actor.commitTurn({ state: sampleState(1), outbox: [{ ...sampleOutbox(1), target: "" }] })).rejects.toThrow(StoreError);
    await expect(actor.commitTurn({ state: sampleState(1), schedulesPut: [{ id: "s", at: Number.NaN, process: "p", perception: null }] })).rejects.toThrow(/at must be epoch milliseconds/);
    expect(actor.loadState()).toBeUndefined();
  });
});

describe.each([
  { path: "asynchronous, batched (the durable default)", options: {} },
  { path: "synchronous (noSync)", options: { noSync: true } },
])("commitTurn is atomic, $path", ({ options }) => {
  async function committedOnce() {
    const actor = stores.open(options).actor("samantha");
    await actor.receive("p-1", { content: "one" });
    await actor.commitTurn({ state: sampleState(1), inboxDone: "p-1", outbox: [sampleOutbox(1)], schedulesPut: [{ id: "s-1", at: 10, process: "p", perception: 1 }] });
    await actor.receive("p-2", { content: "two" });
    const before = {
      state: actor.loadState(),
      inbox: actor.pendingInbox(),
      p2: actor.inboxEntry("p-2"),
      outbox: actor.pendingOutbox(),
      schedules: actor.schedules(),
    };
    const unchanged = () => {
      expect(actor.loadState()).toEqual(before.state);
      expect(actor.pendingInbox()).toEqual(before.inbox);
      expect(actor.inboxEntry("p-2")).toEqual(before.p2);
      expect(actor.pendingOutbox()).toEqual(before.outbox);
      expect(actor.schedules()).toEqual(before.schedules);
    };
    return { actor, unchanged };
  }

  it("writes nothing when a payload cannot be encoded (after state and inbox were put)", async () => {
    const { actor, unchanged } = await committedOnce();
    const bad = { ...sampleOutbox(2), payload: { huge: 2n ** 80n } };
    const result = actor.commitTurn({ state: sampleState(2), inboxDone: "p-2", outbox: [sampleOutbox(2, 0), bad] });
    await expect(result).rejects.toThrow(StoreError);
    await expect(result).rejects.toThrow(/commitTurn 2 for actor samantha failed, nothing was written: .*too large/);
    unchanged();
  });

  it("writes nothing when something throws inside the transaction, at its very end", async () => {
    const { actor, unchanged } = await committedOnce();
    const booby = {
      get detonate(): never {
        throw new Error("forced failure inside the transaction");
      },
    };
    await expect(
      actor.commitTurn({
        state: sampleState(2),
        inboxDone: "p-2",
        outbox: [sampleOutbox(2)],
        schedulesDelete: ["s-1"],
        // Schedules are written last: by then state, inbox, outbox and the delete are in the transaction.
        schedulesPut: [{ id: "s-2", at: 20, process: "p", perception: booby }],
      }),
    ).rejects.toThrow(/forced failure inside the transaction/);
    unchanged();
  });

  it("writes nothing when the processed inbox entry does not exist", async () => {
    const { actor, unchanged } = await committedOnce();
    await expect(actor.commitTurn({ state: sampleState(2), inboxDone: "p-unknown", outbox: [sampleOutbox(2)] })).rejects.toThrow(
      /no inbox entry "p-unknown" for actor samantha/,
    );
    unchanged();
  });

  it("a failed turn does not take down writes batched with it in the same event turn", async () => {
    const store = stores.open(options);
    const a = store.actor("a");
    const b = store.actor("b");
    await a.receive("p-a", 1);
    // Same event turn: lmdb-js puts all three in one LMDB transaction; only the bad child aborts.
    const results = await Promise.allSettled([
      a.commitTurn({ state: sampleState(1), inboxDone: "p-a" }),
      b.commitTurn({ state: sampleState(1), outbox: [{ ...sampleOutbox(1), payload: Symbol("not encodable") }] }),
      b.receive("p-b", 2),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(a.loadState()?.turn).toBe(1);
    expect(a.inboxEntry("p-a")?.status).toBe("done");
    expect(b.loadState()).toBeUndefined();
    expect(b.pendingOutbox()).toEqual([]);
    expect(b.pendingInbox().map((e) => e.id)).toEqual(["p-b"]);
  });
});
