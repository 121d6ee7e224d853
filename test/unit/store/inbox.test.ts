import { describe, expect, it } from "vitest";
import { StoreError } from "../../../runtime/store/index.ts";
import { sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();
const ids = (entries: { id: string }[]) => entries.map((e) => e.id);

describe("receive", () => {
  it("records a perception once; a duplicate id returns false and writes nothing", async () => {
    const actor = stores.open().actor("samantha");
    expect(await actor.receive("env-1", { content: "first" })).toBe(true);
    const first = actor.inboxEntry("env-1");
    expect(first).toMatchObject({ id: "env-1", perception: { content: "first" }, status: "pending", attempts: 0 });
    expect(await actor.receive("env-1", { content: "redelivered, different body" })).toBe(false);
    expect(actor.inboxEntry("env-1")).toEqual(first);
    // The duplicate did not draw a sequence number either: the next arrival follows directly.
    expect(await actor.receive("env-2", {})).toBe(true);
    expect(actor.inboxEntry("env-2")?.seq).toBe((first?.seq ?? 0) + 1);
    expect(ids(actor.pendingInbox())).toEqual(["env-1", "env-2"]);
  });

  it("lets exactly one of many concurrent receives of the same id win", async () => {
    const actor = stores.open().actor("samantha");
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => actor.receive("same", { copy: i })));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(results[0]).toBe(true); // queued first, committed first
    expect(actor.inboxEntry("same")?.perception).toEqual({ copy: 0 });
    expect(actor.pendingInbox()).toHaveLength(1);
  });

  it("lets one win across two handles and two event turns racing", async () => {
    const store = stores.open();
    const [a, b] = [store.actor("samantha"), store.actor("samantha")];
    const racing = [a.receive("x", 1), new Promise<boolean>((r) => setImmediate(() => r(b.receive("x", 2)))), a.receive("x", 3)];
    expect((await Promise.all(racing)).filter(Boolean)).toHaveLength(1);
  });

  it("still recognises an id after it was processed", async () => {
    const actor = stores.open().actor("samantha");
    await actor.receive("p-1", "hi");
    await actor.commitTurn({ state: sampleState(1), inboxDone: "p-1" });
    expect(await actor.receive("p-1", "hi again")).toBe(false);
    expect(actor.inboxEntry("p-1")?.status).toBe("done");
    expect(actor.pendingInbox()).toEqual([]);
  });

  it("refuses a perception msgpack cannot encode, writing nothing and drawing no sequence number", async () => {
    const actor = stores.open().actor("samantha");
    await actor.receive("ok-1", 1);
    await expect(actor.receive("bad", { n: 2n ** 80n })).rejects.toThrow(/receive "bad" for actor samantha failed, nothing was written/);
    expect(actor.inboxEntry("bad")).toBeUndefined();
    await actor.receive("ok-2", 2);
    expect(actor.pendingInbox().map((e) => [e.id, e.seq])).toEqual([["ok-1", 1], ["ok-2", 2]]);
    // The id was never recorded, so a corrected redelivery is accepted.
    expect(await actor.receive("bad", { n: 2 })).toBe(true);
  });

  it("refuses invalid envelope ids", async () => {
    const actor = stores.open().actor("samantha");
    await expect(actor.receive("", 1)).rejects.toThrow(/invalid inbox id "": must not be empty/);
    await expect(actor.receive("a\u0000b", 1)).rejects.toThrow(/control characters/);
    await expect(actor.receive("x".repeat(257), 1)).rejects.toThrow(StoreError);
    expect(actor.pendingInbox()).toEqual([]);
  });
});

describe("pendingInbox", () => {
  it("lists pending entries in arrival order, without done or failed ones", async () => {
    const actor = stores.open().actor("samantha");
    // Ids that sort differently from their arrival order.
    for (const id of ["zulu", "alpha", "mike", "bravo", "yankee"]) await actor.receive(id, { id });
    expect(ids(actor.pendingInbox())).toEqual(["zulu", "alpha", "mike", "bravo", "yankee"]);
    await actor.commitTurn({ state: sampleState(1), inboxDone: "alpha" });
    await actor.markError("bravo", "gate timed out");
    expect(ids(actor.pendingInbox())).toEqual(["zulu", "mike", "yankee"]);
    await actor.receive("charlie", {});
    expect(ids(actor.pendingInbox())).toEqual(["zulu", "mike", "yankee", "charlie"]);
    const seqs = actor.pendingInbox().map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });

  it("keeps arrival order across a reopen", async () => {
    const first = stores.open();
    for (const id of ["c", "a", "b"]) await first.actor("samantha").receive(id, id);
    await first.close();
    const actor = stores.open().actor("samantha");
    expect(ids(actor.pendingInbox())).toEqual(["c", "a", "b"]);
    await actor.receive("d", "d");
    expect(ids(actor.pendingInbox())).toEqual(["c", "a", "b", "d"]);
  });
});

describe("markError", () => {
  it("keeps the entry with its error, counts attempts, and never drops it", async () => {
    const store = stores.open();
    const actor = store.actor("samantha");
    await actor.receive("p-1", { content: "boom" });
    await actor.markError("p-1", "the process broke");
    expect(actor.inboxEntry("p-1")).toMatchObject({ status: "error", error: "the process broke", attempts: 1, perception: { content: "boom" } });
    await actor.markError("p-1", "broke again");
    expect(actor.inboxEntry("p-1")).toMatchObject({ status: "error", error: "broke again", attempts: 2 });
    expect(actor.pendingInbox()).toEqual([]);
    expect(ids(actor.failedInbox())).toEqual(["p-1"]);
    // Pruning removes done entries only.
    expect(await actor.pruneInbox(0)).toBe(0);
    await store.close();
    const reopened = stores.open().actor("samantha");
    expect(reopened.inboxEntry("p-1")).toMatchObject({ status: "error", attempts: 2 });
    expect(ids(reopened.failedInbox())).toEqual(["p-1"]);
  });

  it("rejects an unknown id and a done entry", async () => {
    const actor = stores.open().actor("samantha");
    await expect(actor.markError("nope", "x")).rejects.toThrow(/markError: no inbox entry "nope" for actor samantha/);
    await actor.receive("p", 1);
    await actor.commitTurn({ state: sampleState(1), inboxDone: "p" });
    await expect(actor.markError("p", "x")).rejects.toThrow(/already done/);
    expect(actor.inboxEntry("p")?.status).toBe("done");
  });

  it("retryInbox puts a failed entry back at its arrival place", async () => {
    const actor = stores.open().actor("samantha");
    for (const id of ["a", "b", "c"]) await actor.receive(id, id);
    await actor.markError("a", "flaky provider");
    expect(ids(actor.pendingInbox())).toEqual(["b", "c"]);
    await actor.retryInbox("a");
    expect(ids(actor.pendingInbox())).toEqual(["a", "b", "c"]);
    expect(actor.inboxEntry("a")).toMatchObject({ status: "pending", attempts: 1 });
    expect(actor.inboxEntry("a")?.error).toBeUndefined();
    expect(actor.failedInbox()).toEqual([]);
  });
});

describe("pruneInbox", () => {
  it("removes old done entries only; a pruned id is accepted again", async () => {
    const actor = stores.open().actor("samantha");
    for (const id of ["done-1", "done-2", "pending", "failed"]) await actor.receive(id, id);
    await actor.commitTurn({ state: sampleState(1), inboxDone: "done-1" });
    await actor.commitTurn({ state: sampleState(2), inboxDone: "done-2" });
    await actor.markError("failed", "x");
    expect(await actor.pruneInbox(60_000)).toBe(0); // nothing is a minute old
    await new Promise((r) => setTimeout(r, 5));
    expect(await actor.pruneInbox(1)).toBe(2);
    expect(actor.inboxEntry("done-1")).toBeUndefined();
    expect(actor.inboxEntry("done-2")).toBeUndefined();
    expect(ids(actor.pendingInbox())).toEqual(["pending"]);
    expect(ids(actor.failedInbox())).toEqual(["failed"]);
    expect(await actor.receive("done-1", "again")).toBe(true);
    await expect(actor.pruneInbox(-1)).rejects.toThrow(StoreError);
  });
});
