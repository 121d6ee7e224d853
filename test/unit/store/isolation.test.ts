import { describe, expect, it } from "vitest";
import type { LmdbActorStore } from "../../../runtime/store/index.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

async function populate(actor: LmdbActorStore, turn: number): Promise<void> {
  await actor.receive("shared-id", { to: actor.actorId });
  await actor.receive(`own-${actor.actorId}`, {});
  await actor.commitTurn({ state: sampleState(turn), inboxDone: "shared-id", outbox: [sampleOutbox(turn)] });
  await actor.putSchedule({ id: "s", at: turn, process: "p", perception: actor.actorId });
  await actor.kv("notes").put(["k", 1], actor.actorId);
}

function snapshot(actor: LmdbActorStore) {
  return {
    state: actor.loadState(),
    done: actor.inboxEntry("shared-id"),
    pending: actor.pendingInbox(),
    outbox: actor.pendingOutbox(),
    schedules: actor.schedules(),
    kv: actor.kv("notes").range(),
  };
}

describe("actor keyspaces", () => {
  // "a" is a prefix of the others' ids: a range scan by actor must not bleed into them.
  const ids = ["a", "a-b", "a_b", "ab", "b"];

  it("are isolated: the same ids in two actors are two entries, and destroy removes one actor only", async () => {
    const store = stores.open();
    for (const [i, id] of ids.entries()) await populate(store.actor(id), i + 1);
    const before = Object.fromEntries(ids.map((id) => [id, snapshot(store.actor(id))]));
    expect(before["a"].done?.perception).toEqual({ to: "a" });
    expect(before["ab"].done?.perception).toEqual({ to: "ab" });
    expect(store.actorIds()).toEqual(["a", "a-b", "a_b", "ab", "b"]);

    await store.actor("a").destroy();
    const a = store.actor("a");
    expect(snapshot(a)).toEqual({ state: undefined, done: undefined, pending: [], outbox: [], schedules: [], kv: [] });
    for (const id of ids.slice(1)) expect(snapshot(store.actor(id))).toEqual(before[id]);
    expect(store.actorIds()).toEqual(["a-b", "a_b", "ab", "b"]);

    // A destroyed actor starts over cleanly, sequences included.
    expect(await a.receive("shared-id", "new life")).toBe(true);
    expect(a.inboxEntry("shared-id")?.seq).toBe(1);
  });

  it("handles are cached per id, and survive a reopen by id", async () => {
    const first = stores.open();
    expect(first.actor("x")).toBe(first.actor("x"));
    expect(first.kv("x", "ns")).toBeDefined();
    await first.actor("x").commitTurn({ state: sampleState(7) });
    await first.close();
    const store = stores.open();
    expect(store.actorIds()).toEqual(["x"]);
    expect(store.actor("x").loadState()).toEqual(sampleState(7));
  });
});
