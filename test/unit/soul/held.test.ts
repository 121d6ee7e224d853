import { describe, expect, it } from "vitest";
import { createSoul, defineSoul, HeldPerceptionReleased, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { MAX_HELD } from "../../../actors/soul/HeldPerceptions.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

/** A soul whose turn for `block` waits on a gate, so the test decides when it ends. */
function gatedSoul(id: string, gate: Promise<void>, started?: () => void) {
  const main: MentalProcess = async ({ workingMemory }) => {
    const { content } = usePerceptions().invokingPerception;
    if (content === "block") {
      started?.();
      await gate;
    }
    if (content === "fail") throw new Error("the process broke");
    useActions().speak(`echo: ${content}`);
    return workingMemory;
  };
  return createSoul({ blueprint: defineSoul({ name: "H", persona: "", initialProcess: main, processes: { main } }), id, store: env.actor(id) });
}

describe("perceptions held by their source (perceiveHeld)", () => {
  it("writes nothing before the turn; the turn's commit records the perception, done, and only then is it settled", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("h1", gate.promise, started.resolve);
    const store = env.actor("h1");
    const result = await soul.perceiveHeld({ ...said("block"), id: "env-1" });
    expect(result).toMatchObject({ accepted: true, id: "env-1" });
    expect(result.settled).toBeInstanceOf(Promise);
    let settled = false;
    void result.settled?.then(() => (settled = true));
    await started.promise;
    // Mid-turn: no inbox entry yet, and not acknowledged.
    expect(store.inboxEntry("env-1")).toBeUndefined();
    expect(settled).toBe(false);
    gate.resolve();
    await result.settled;
    expect(store.inboxEntry("env-1")).toMatchObject({ id: "env-1", status: "done", attempts: 1, perception: { content: "block" } });
    expect(store.loadState()?.turn).toBe(1);
    // A redelivery after the commit is recognised from the inbox.
    expect(await soul.perceiveHeld({ ...said("block"), id: "env-1" })).toMatchObject({ accepted: false, reason: "duplicate" });
    await soul.idle();
    expect(store.loadState()?.turn).toBe(1);
    await soul.stop();
  });

  it("a redelivery while the first is still held settles with the first, and the perception is processed once", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("h2", gate.promise, started.resolve);
    const log = record(soul);
    const first = await soul.perceiveHeld({ ...said("block"), id: "env-2" });
    await started.promise;
    const again = await soul.perceiveHeld({ ...said("block"), id: "env-2" });
    expect(again).toMatchObject({ accepted: false, reason: "duplicate" });
    expect(again.settled).toBe(first.settled);
    gate.resolve();
    await again.settled;
    await soul.idle();
    expect(log.said()).toEqual(["echo: block"]);
    await soul.stop();
  });

  it("writes held perceptions to the inbox ahead of one that takes the inbox path, so a crash would replay them in order", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("h3", gate.promise, started.resolve);
    const store = env.actor("h3");
    const log = record(soul);
    const a = await soul.perceiveHeld({ ...said("block"), id: "a" });
    await started.promise;
    const b = await soul.perceiveHeld({ ...said("second"), id: "b" });
    expect(store.inboxEntry("a")).toBeUndefined();
    // `perceive` (the inbox path) arrives while a and b are held: both go into the inbox first.
    expect(await soul.perceive({ ...said("third"), id: "c" })).toMatchObject({ accepted: true });
    const order = ["a", "b", "c"].map((id) => store.inboxEntry(id)?.seq);
    expect(order.every((seq) => typeof seq === "number")).toBe(true);
    expect([...order].sort((x, y) => (x as number) - (y as number))).toEqual(order);
    expect(store.pendingInbox().map((e) => e.id)).toEqual(["a", "b", "c"]);
    // In the inbox, they may be acknowledged before their turns.
    await Promise.all([a.settled, b.settled]);
    gate.resolve();
    await soul.idle();
    expect(log.said()).toEqual(["echo: block", "echo: second", "echo: third"]);
    expect(["a", "b", "c"].map((id) => store.inboxEntry(id)?.status)).toEqual(["done", "done", "done"]);
    expect(store.pendingInbox()).toEqual([]);
    await soul.stop();
  });

  it("records a failed turn's perception in the inbox as failed, then settles it", async () => {
    const soul = gatedSoul("h4", Promise.resolve());
    const store = env.actor("h4");
    const result = await soul.perceiveHeld({ ...said("fail"), id: "broken" });
    await result.settled;
    expect(store.inboxEntry("broken")).toMatchObject({ status: "error", error: expect.stringMatching(/^the process broke at test\/unit\/soul\/held\.test\.ts:\d+:\d+$/), perception: { content: "fail" } });
    await soul.idle();
    await soul.stop();
  });

  it("hands back, unprocessed, a held perception the soul never reached before it stopped", async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("h5", gate.promise, started.resolve);
    const store = env.actor("h5");
    const running = await soul.perceiveHeld({ ...said("block"), id: "running" });
    await started.promise;
    const queued = await soul.perceiveHeld({ ...said("never"), id: "queued" });
    const stopping = soul.stop();
    gate.resolve();
    await stopping;
    // The running turn finished and committed; the queued one goes back to its source.
    await expect(running.settled).resolves.toBeUndefined();
    await expect(queued.settled).rejects.toBeInstanceOf(HeldPerceptionReleased);
    expect(store.inboxEntry("running")?.status).toBe("done");
    expect(store.inboxEntry("queued")).toBeUndefined();
  });

  it(`holds at most ${MAX_HELD}; past that, perceptions take the inbox path and may be acknowledged at once`, async () => {
    const gate = deferred();
    const started = deferred();
    const soul = gatedSoul("h6", gate.promise, started.resolve);
    const log = record(soul);
    const results = [await soul.perceiveHeld({ ...said("block"), id: "p0" })];
    await started.promise;
    for (let i = 1; i <= MAX_HELD + 2; i++) results.push(await soul.perceiveHeld({ ...said(`m${i}`), id: `p${i}` }));
    expect(results.slice(0, MAX_HELD).every((r) => r.settled !== undefined)).toBe(true);
    expect(results[MAX_HELD]?.settled).toBeUndefined();
    gate.resolve();
    await Promise.all(results.map((r) => r.settled));
    await soul.idle();
    expect(log.said()).toEqual(["echo: block", ...Array.from({ length: MAX_HELD + 2 }, (_, i) => `echo: m${i + 1}`)]);
    await soul.stop();
  });
});
