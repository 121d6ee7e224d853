import { describe, expect, it } from "vitest";
import { TransitionCounts } from "../../../runtime/node/transitionCounts.ts";
import type { ActorState, LmdbActorStore } from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

function state(turn: number, process: string): ActorState {
  return { workingMemory: { soulName: "S", memories: [], regionOrder: [] }, soulMemory: {}, processMemory: {}, currentProcess: process, invocationCounts: {}, turn };
}

/** A turn that starts in `from`, runs `path` and rests in `to`. */
const turn = (actor: LmdbActorStore, n: number, from: string, path: string[], to: string) =>
  actor.commitTurn({ state: state(n, to), log: { kind: "turn", at: n, trace: { from, path, perception: {}, steps: [], proposals: [], whispers: [], startedAt: 0, durationMs: 0 } } });

describe("transition counts over the turns kept", () => {
  it("counts each way taken, reads only new turns on the next request, and forgets pruned turns", async () => {
    const actor = stores.open({ noSync: true, turnLog: { keep: 4 } }).actor("s");
    const counts = new TransitionCounts();
    await turn(actor, 1, "a", ["a"], "b");
    await turn(actor, 2, "b", ["b", "c"], "c");
    expect(counts.of("s", actor.history!)).toEqual({ "a->b": 1, "b->c": 1 });
    await turn(actor, 3, "c", ["c"], "a");
    await turn(actor, 4, "a", ["a"], "b");
    expect(counts.of("s", actor.history!)).toEqual({ "a->b": 2, "b->c": 1, "c->a": 1 });
    // Past keep + slack (8 here) the oldest turns are pruned, and their edges no longer count.
    for (let n = 5; n <= 14; n++) await turn(actor, n, "b", ["b"], "b");
    const { oldest } = actor.history!.bounds();
    expect(oldest).toBeGreaterThan(4);
    expect(counts.of("s", actor.history!)).toEqual({});
    await turn(actor, 15, "b", ["b"], "c");
    expect(counts.of("s", actor.history!)).toEqual({ "b->c": 1 });
  });
});
