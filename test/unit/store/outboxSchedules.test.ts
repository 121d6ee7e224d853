import { describe, expect, it } from "vitest";
import type { ScheduledEntry } from "../../../runtime/store/index.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

describe("outbox", () => {
  it("keeps committed entries in creation order until each is acknowledged", async () => {
    const store = stores.open();
    const actor = store.actor("samantha");
    // Ids deliberately not in creation order.
    const entries = [{ ...sampleOutbox(1), id: "t1-z" }, { ...sampleOutbox(1), id: "t1-a" }, { ...sampleOutbox(1), id: "t1-m" }];
    await actor.commitTurn({ state: sampleState(1), outbox: entries });
    await actor.commitTurn({ state: sampleState(2), outbox: [{ ...sampleOutbox(2), id: "t2-0" }] });
    expect(actor.pendingOutbox().map((e) => e.id)).toEqual(["t1-z", "t1-a", "t1-m", "t2-0"]);
    await actor.ackOutbox("t1-a");
    expect(actor.pendingOutbox().map((e) => e.id)).toEqual(["t1-z", "t1-m", "t2-0"]);
    // Acknowledging twice, or an unknown id, is harmless.
    await actor.ackOutbox("t1-a");
    await actor.ackOutbox("never-existed");
    await store.close();

    const reopened = stores.open().actor("samantha");
    expect(reopened.pendingOutbox()).toEqual([entries[0], entries[2], { ...sampleOutbox(2), id: "t2-0" }]);
  });

  it("a re-committed id replaces its entry and keeps its place", async () => {
    const actor = stores.open().actor("samantha");
    await actor.commitTurn({ state: sampleState(1), outbox: [sampleOutbox(1, 0), sampleOutbox(1, 1)] });
    const again = { ...sampleOutbox(1, 0), payload: { text: "re-published" } };
    await actor.commitTurn({ state: sampleState(1), outbox: [again] });
    expect(actor.pendingOutbox()).toEqual([again, sampleOutbox(1, 1)]);
  });
});

describe("schedules", () => {
  const entry = (id: string, at: number): ScheduledEntry => ({ id, at, process: "remind", perception: { action: "tick", content: id }, params: { id } });

  it("put, list (soonest first) and delete survive a reopen", async () => {
    const first = stores.open();
    const actor = first.actor("samantha");
    await actor.putSchedule(entry("late", 3000));
    await actor.putSchedule(entry("early", 1000));
    await actor.putSchedule(entry("middle", 2000));
    await actor.putSchedule({ ...entry("late", 4000) }); // same id: replaced
    await actor.deleteSchedule("middle");
    await actor.deleteSchedule("unknown"); // no-op
    await first.close();

    const reopened = stores.open().actor("samantha");
    expect(reopened.schedules()).toEqual([entry("early", 1000), entry("late", 4000)]);
    await reopened.deleteSchedule("early");
    expect(reopened.schedules()).toEqual([entry("late", 4000)]);
  });

  it("a turn adds and cancels schedules in its own commit", async () => {
    const actor = stores.open().actor("samantha");
    await actor.putSchedule(entry("old", 1));
    await actor.commitTurn({ state: sampleState(1), schedulesPut: [entry("new", 5)], schedulesDelete: ["old"] });
    expect(actor.schedules()).toEqual([entry("new", 5)]);
  });

  it("refuses a malformed entry", async () => {
    const actor = stores.open().actor("samantha");
    await expect(actor.putSchedule({ ...entry("x", 1), process: "" })).rejects.toThrow(/process must be a non-empty string/);
    await expect(actor.putSchedule({ ...entry("", 1) })).rejects.toThrow(/invalid schedule id/);
    expect(actor.schedules()).toEqual([]);
  });
});
