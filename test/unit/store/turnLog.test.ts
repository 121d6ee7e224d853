import { open } from "lmdb";
import { describe, expect, it } from "vitest";
import { lmdbOptions } from "../../../runtime/store/environment.ts";
import { TurnNotKeptError, type ActorState, type LmdbActorStore, type ScheduledEntry } from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

/** A soul's conversation with a window: each turn adds two memories and keeps the last `window`. */
function conversation(turns: number, window = 6): unknown[][] {
  const all: unknown[] = [{ role: "system", content: "You are Samantha.", region: "core" }];
  const byTurn: unknown[][] = [];
  for (let t = 1; t <= turns; t++) {
    all.push({ role: "user", content: `question ${t}`, name: "Ada" }, { role: "assistant", content: `answer ${t}` });
    const [core, ...rest] = all;
    byTurn.push([core, ...rest.slice(-window)]);
  }
  return byTurn;
}

function stateAt(turn: number, memories: unknown[]): ActorState {
  return {
    workingMemory: { soulName: "Samantha", memories, regionOrder: ["core", "default"] },
    soulMemory: { mood: `mood ${turn}`, count: turn },
    processMemory: { talking: [turn] },
    currentProcess: turn % 2 === 0 ? "talking" : "thinking",
    invocationCounts: { talking: turn },
    turn,
    snapshot: { status: "active", value: { talking: "idle" }, context: { turn } },
    metadata: { displayName: "Samantha" },
  };
}

const schedule = (turn: number): ScheduledEntry => ({ id: `wake-${turn}`, at: 1_800_000_000_000 + turn, process: "talking", perception: { content: `wake ${turn}` } });

/** Commits `turns` turns, each writing a user model version and a schedule; returns each turn's state as loaded after it. */
async function commitTurns(actor: LmdbActorStore, turns: number, from = 1, window = 6): Promise<Map<number, ActorState>> {
  const memories = conversation(from + turns - 1, window);
  const after = new Map<number, ActorState>();
  for (let t = from; t < from + turns; t++) {
    await actor.commitTurn({
      state: stateAt(t, memories[t - 1] as unknown[]),
      kv: [{ namespace: "userModels", key: ["Ada", t], value: { version: t, note: `turn ${t}` } }, { namespace: "notes", key: ["last"], value: t }],
      schedulesPut: [schedule(t)],
      ...(t > 1 ? { schedulesDelete: [`wake-${t - 1}`] } : {}),
      log: { kind: "turn", at: 1_000 * t, trace: { steps: [{ step: "externalDialog", raw: `answer ${t}` }] } },
    });
    after.set(t, actor.loadState() as ActorState);
  }
  return after;
}

describe("the turn log", () => {
  it("reverts to exactly the committed state of an earlier turn: memory, soul and process memory, process, schedules, kv", async () => {
    const store = stores.open({ noSync: true });
    const actor = store.actor("samantha");
    const after = await commitTurns(actor, 7);
    const outcome = await actor.history!.revertTo(3, "ada", 9_000);
    expect(outcome).toEqual({ turn: 7, toTurn: 3, by: "ada", at: 9_000 });

    const now = actor.loadState() as ActorState;
    const three = after.get(3) as ActorState;
    expect(now.turn).toBe(7); // turn numbers never go back
    expect({ ...now, turn: 3 }).toEqual(three);
    expect(actor.schedules().map((s) => s.id)).toEqual(["wake-3"]);
    expect(actor.kv("userModels").range({ prefix: ["Ada"] }).map((e) => e.key)).toEqual([["Ada", 1], ["Ada", 2], ["Ada", 3]]);
    expect(actor.kv("notes").get(["last"])).toBe(3);

    // The next turn is 8, built on turn 3's state.
    await actor.commitTurn({ state: { ...stateAt(8, [...(three.workingMemory as { memories: unknown[] }).memories, { role: "user", content: "after the revert" }]) }, log: { kind: "turn", at: 10_000 } });
    expect(actor.loadState()?.turn).toBe(8);
    expect(actor.history!.bounds()).toEqual({ oldest: 1, newest: 8 });
  });

  it("a later revert to a turn the first revert undid brings its state and its kv back", async () => {
    const store = stores.open({ noSync: true });
    const actor = store.actor("samantha");
    const after = await commitTurns(actor, 7);
    await actor.history!.revertTo(3, "ada", 9_000);
    await commitTurns(actor, 1, 8);
    await actor.history!.revertTo(6, "ada", 11_000);
    expect({ ...(actor.loadState() as ActorState), turn: 6 }).toEqual(after.get(6));
    expect(actor.kv("userModels").range({ prefix: ["Ada"] }).map((e) => e.key)).toEqual([1, 2, 3, 4, 5, 6].map((v) => ["Ada", v]));
    expect(actor.kv("notes").get(["last"])).toBe(6);
    expect(actor.schedules().map((s) => s.id)).toEqual(["wake-6"]);
  });

  it("lists turns newest first with memory before and after, kv writes, trace and reverts", async () => {
    const store = stores.open({ noSync: true });
    const actor = store.actor("samantha");
    const after = await commitTurns(actor, 5);
    await actor.history!.revertTo(2, "ada", 9_000);
    const page = actor.history!.page(3);
    expect(page.map((e) => [e.turn, e.kind])).toEqual([[5, "revert"], [5, "turn"], [4, "turn"], [3, "turn"]]);
    const five = page[1];
    expect((five?.state.workingMemory as { memories: unknown[] }).memories).toEqual((after.get(5)?.workingMemory as { memories: unknown[] }).memories);
    expect(five?.memoriesBefore).toEqual((after.get(4)?.workingMemory as { memories: unknown[] }).memories);
    expect(five?.trace).toEqual({ steps: [{ step: "externalDialog", raw: "answer 5" }] });
    expect(five?.kv).toContainEqual({ namespace: "userModels", key: ["Ada", 5], value: { version: 5, note: "turn 5" } });
    expect(page[0]?.revert).toEqual({ toTurn: 2, by: "ada" });
    const older = actor.history!.page(3, 3);
    expect(older.map((e) => e.turn)).toEqual([2, 1]);
    expect(older[1]?.memoriesBefore).toEqual([]);
  });

  it("keeps `keep` turns, prunes the rest with the memories no kept turn uses, and refuses a revert to a pruned turn", async () => {
    const dir = stores.dir();
    const store = stores.open({ noSync: true, turnLog: { keep: 10 } });
    const actor = store.actor("samantha");
    const after = await commitTurns(actor, 60, 1, 6);
    const { oldest, newest } = actor.history!.bounds();
    expect(newest).toBe(60);
    expect(60 - (oldest as number) + 1).toBeGreaterThanOrEqual(10);
    expect(60 - (oldest as number) + 1).toBeLessThanOrEqual(10 + 8);
    await expect(actor.history!.revertTo(2, "ada", 1)).rejects.toBeInstanceOf(TurnNotKeptError);
    await actor.history!.revertTo(55, "ada", 99_000);
    expect({ ...(actor.loadState() as ActorState), turn: 55 }).toEqual(after.get(55));
    await store.close();

    // Each kept turn adds two memories: what is stored is about the window plus two per kept turn, not 2 per turn ever.
    const root = open({ ...lmdbOptions({ path: dir }), readOnly: true });
    try {
      const memoryKeys = [...root.openDB({ name: "memories" }).getKeys({ start: ["samantha"], end: ["samantha", "\uffff"] })];
      expect(memoryKeys.length).toBeLessThanOrEqual(7 + 2 * 20);
      expect(memoryKeys.length).toBeGreaterThanOrEqual(7 + 2 * 9);
    } finally {
      await root.close();
    }
  });

  it("keeps nothing with turnLog false", async () => {
    const store = stores.open({ noSync: true, turnLog: false });
    const actor = store.actor("samantha");
    await commitTurns(actor, 5);
    expect(actor.history).toBeUndefined();
  });

  it("survives a reopen: the log, the revert and the next turn", async () => {
    const dir = stores.dir();
    let store = stores.open({ noSync: true });
    const after = await commitTurns(store.actor("samantha"), 4);
    await store.close();
    store = stores.open({ path: dir, noSync: true });
    const actor = store.actor("samantha");
    await actor.history!.revertTo(1, "ada", 5_000);
    expect({ ...(actor.loadState() as ActorState), turn: 1 }).toEqual(after.get(1));
    await commitTurns(actor, 1, 5);
    expect(actor.loadState()?.turn).toBe(5);
    expect(actor.history!.page(1)[0]?.memoriesBefore).toEqual((after.get(1)?.workingMemory as { memories: unknown[] }).memories);
  });
});
