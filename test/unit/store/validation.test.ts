import { describe, expect, it } from "vitest";
import { openStore, StoreError } from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

describe("actor ids", () => {
  const bad: [unknown, RegExp][] = [
    ["", /invalid actor id "": must not be empty/],
    ["has space", /may contain only A-Z a-z 0-9 _ - \(found " "\)/],
    ["dot.ted", /found "\."/],
    ["sub>ject", /found ">"/],
    ["naïve", /found "ï"/],
    ["../escape", /found "\."/],
    ["x".repeat(129), /must be at most 128 characters, got 129/],
    [42, /must be a string/],
  ];

  it.each(bad)("rejects %j with a clear StoreError", (id, message) => {
    const store = stores.open();
    let thrown: unknown;
    try {
      store.actor(id as string);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StoreError);
    expect((thrown as Error).message).toMatch(message);
    expect(() => store.kv(id as string, "ns")).toThrow(StoreError);
  });

  it("accepts the whole token alphabet up to 128 characters", () => {
    const store = stores.open();
    for (const id of ["a", "Soul_01-b", "x".repeat(128)]) expect(store.actor(id).actorId).toBe(id);
  });

  it("rejects an invalid kv namespace", () => {
    const store = stores.open();
    expect(() => store.kv("a", "user models")).toThrow(/invalid kv namespace "user models"/);
  });
});

describe("a closed store", () => {
  it("refuses reads and writes with a StoreError, and closing twice is fine", async () => {
    const store = stores.open();
    const actor = store.actor("a");
    await store.close();
    await store.close();
    expect(() => actor.loadState()).toThrow(/is closed/);
    expect(() => store.actorIds()).toThrow(StoreError);
    await expect(actor.receive("x", 1)).rejects.toThrow(/is closed/);
    await expect(actor.commitTurn({ state: { workingMemory: [], soulMemory: {}, processMemory: {}, currentProcess: "p", invocationCounts: {}, turn: 1 } })).rejects.toThrow(StoreError);
    expect(() => store.actor("new")).toThrow(/is closed/);
  });

  it("lets writes queued before close finish", async () => {
    const store = stores.open();
    const writes = Array.from({ length: 10 }, (_, i) => store.actor("a").receive(`p-${i}`, i));
    await store.close();
    expect(await Promise.all(writes)).toEqual(Array(10).fill(true));
    const reopened = stores.open();
    expect(reopened.actor("a").pendingInbox()).toHaveLength(10);
  });
});

describe("options", () => {
  it("rejects a nonsensical mapSize or durability", () => {
    expect(() => openStore({ path: stores.dir(), mapSize: 10 })).toThrow(/invalid store.mapSize 10/);
    expect(() => openStore({ path: stores.dir(), durability: "sometimes" as "flush" })).toThrow(/invalid store.durability/);
  });

  it("creates a missing data directory, even one whose name has a dot", async () => {
    const store = stores.open({ path: `${stores.dir()}/nested/data.v1` });
    await store.actor("a").receive("x", 1);
    expect(store.path.endsWith("data.v1")).toBe(true);
    expect(store.actor("a").pendingInbox()).toHaveLength(1);
  });
});
