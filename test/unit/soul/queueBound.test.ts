/**
 * A soul's waiting perceptions: bounded (`maxQueued`), with a clear error to an in-process
 * sender past the bound and a `room()` a source can wait on; enqueued in constant time (no
 * copy of the queue per arrival); and shown to an inspector as a count and a few ids, not as
 * the whole queue.
 */
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { createSoul, defineSoul, PerceptionQueue, SoulQueueFull, useActions, usePerceptions, type MentalProcess, type Perception } from "../../../actors/soul/index.ts";
import { sanitizeContext } from "../../../runtime/inspect/sanitize.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

/** A soul whose turn for `block` waits on a gate, so perceptions pile up behind it. */
function gatedSoul(id: string, gate: Promise<void>, started: () => void, options: { maxQueued?: number; inspect?: (e: InspectionEvent) => void } = {}) {
  const main: MentalProcess = async ({ workingMemory }) => {
    const { content } = usePerceptions().invokingPerception;
    if (content === "block") {
      started();
      await gate;
    }
    useActions().speak(`echo: ${content}`);
    return workingMemory;
  };
  return createSoul({ blueprint: defineSoul({ name: "B", persona: "", initialProcess: main, processes: { main } }), id, store: env.actor(id), ...options });
}

const perception = (i: number, content = `m${i}`): Perception => ({ id: `p${i}`, action: "said", content, name: "Ada", ts: i });

/**
 * Counts the elements every array iteration in `run` steps over (spread, for-of,
 * destructuring): copying a queue per arrival steps over the whole queue each time.
 */
function arraySteps(run: () => void): number {
  const proto = Array.prototype as unknown as { [Symbol.iterator]: () => Iterator<unknown> };
  const original = proto[Symbol.iterator];
  let steps = 0;
  proto[Symbol.iterator] = function (this: unknown[]) {
    const inner = original.call(this);
    return {
      next: () => {
        steps++;
        return inner.next();
      },
      [Symbol.iterator]() {
        return this;
      },
    } as Iterator<unknown>;
  };
  try {
    run();
  } finally {
    proto[Symbol.iterator] = original;
  }
  return steps;
}

describe("the bound on a soul's waiting perceptions", () => {
  it("refuses a perception past maxQueued with a clear error, writes nothing for it, and takes it once a turn made room", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("b1", gate.promise, started.resolve, { maxQueued: 3 });
    const log = record(soul);
    const store = env.actor("b1");
    await soul.perceive({ ...said("block"), id: "run" });
    await started.promise;
    for (const id of ["w1", "w2", "w3"]) expect(await soul.perceive({ ...said(id), id })).toMatchObject({ accepted: true });
    expect(soul.state()).toMatchObject({ pending: 3, running: true });

    const refused = soul.perceive({ ...said("w4"), id: "w4" });
    await expect(refused).rejects.toBeInstanceOf(SoulQueueFull);
    await expect(refused).rejects.toThrow("soul 'b1' has 3 perceptions waiting, its limit (maxQueued); nothing was taken");
    expect(store.inboxEntry("w4")).toBeUndefined();
    // The held path refuses it the same way.
    await expect(soul.perceiveHeld({ ...said("w4"), id: "w4" })).rejects.toBeInstanceOf(SoulQueueFull);
    expect(soul.state().pending).toBe(3);

    const room = soul.room();
    expect(room).toBeInstanceOf(Promise);
    gate.resolve();
    await room;
    expect(soul.room()).toBeUndefined();
    expect(await soul.perceive({ ...said("w4"), id: "w4" })).toMatchObject({ accepted: true });
    await soul.idle();
    expect(log.said()).toEqual(["echo: block", "echo: w1", "echo: w2", "echo: w3", "echo: w4"]);
    await soul.stop();
  });

  it("lets a waiting source go when the soul stops", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("b2", gate.promise, started.resolve, { maxQueued: 1 });
    await soul.perceive(said("block"));
    await started.promise;
    await soul.perceive(said("waits"));
    const room = soul.room();
    expect(room).toBeInstanceOf(Promise);
    const stopped = soul.stop();
    await room;
    gate.resolve();
    await stopped;
  });

  it("refuses a maxQueued that is not a whole number of at least 1", () => {
    const main: MentalProcess = async ({ workingMemory }) => workingMemory;
    const blueprint = defineSoul({ name: "Z", persona: "", initialProcess: main, processes: { main } });
    expect(() => createSoul({ blueprint, id: "z", store: env.actor("z"), maxQueued: 0 })).toThrow("maxQueued must be a whole number of at least 1 (got 0)");
  });
});

describe("the queue of waiting perceptions", () => {
  it("keeps order through enqueue, dequeue and a replaced head, and an older version never sees what came after it", () => {
    const q1 = PerceptionQueue.empty.enqueue(perception(1)).enqueue(perception(2));
    const q2 = q1.enqueue(perception(3));
    const rest = q2.dequeue();
    const routed = rest.replaceHead({ ...perception(2), content: "replaced" });
    expect([...q1].map((p) => p.id)).toEqual(["p1", "p2"]);
    expect([...q2].map((p) => p.id)).toEqual(["p1", "p2", "p3"]);
    expect(rest.head?.id).toBe("p2");
    expect(routed.toArray().map((p) => p.content)).toEqual(["replaced", "m3"]);
    // Extending the older version again branches: neither sees the other's perception.
    const branch = q1.enqueue(perception(9));
    expect(branch.toArray().map((p) => p.id)).toEqual(["p1", "p2", "p9"]);
    expect(q2.toArray().map((p) => p.id)).toEqual(["p1", "p2", "p3"]);
    expect(q2.dequeue().dequeue().dequeue()).toBe(PerceptionQueue.empty);
  });

  it("enqueues in constant time: the machine copies nothing per arrival (array steps grow linearly, not quadratically)", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("c1", gate.promise, started.resolve, { maxQueued: 100_000 });
    await soul.perceive(said("block"));
    await started.promise;
    const send = (from: number, n: number) => arraySteps(() => {
      for (let i = from; i < from + n; i++) soul.actor.send({ type: "PERCEIVE", perception: perception(i) });
    });
    const first = send(0, 2_000);
    const next = send(2_000, 8_000);
    expect(soul.actor.getSnapshot().context.queue.length).toBe(10_000);
    // A copy per arrival steps over the whole queue: ~1,000 steps per arrival on average for
    // the first 2,000, ~6,000 for the next 8,000. Here each arrival costs the same few dozen
    // (XState's own iterations over its transitions and actions).
    expect(first / 2_000).toBeLessThan(100);
    expect(next / 8_000).toBeLessThanOrEqual(first / 2_000 + 1);
    const stopped = soul.stop();
    gate.resolve();
    await stopped;
  });

  it("shows an inspector how many wait and which come next, not the perceptions: every snapshot stays small with a long queue", async () => {
    const gate = deferred();
    const started = deferred();
    const events: InspectionEvent[] = [];
    const soul = gatedSoul("i1", gate.promise, started.resolve, { inspect: (e) => events.push(e) });
    await soul.perceive(said("block"));
    await started.promise;
    const long = "x".repeat(500);
    for (let i = 0; i < 300; i++) await soul.perceive({ ...said(`${i} ${long}`), id: `q${i}` });
    const snapshots = events.filter((e): e is InspectionEvent & { type: "@xstate.snapshot" } => e.type === "@xstate.snapshot" && e.actorRef === soul.actor);
    const sizes = snapshots.map((e) => JSON.stringify(sanitizeContext((e.snapshot as { context?: unknown }).context)).length);
    // The whole queue would be 300 × ~560 bytes by the end.
    expect(Math.max(...sizes)).toBeLessThan(2_000);
    const last = sanitizeContext(soul.actor.getSnapshot().context) as { queue: unknown };
    expect(last.queue).toEqual({ length: 300, next: ["q0", "q1", "q2"] });
    gate.resolve();
    await soul.idle();
    await soul.stop();
  });
});
