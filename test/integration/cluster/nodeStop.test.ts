/**
 * A node's stop when one of its steps fails: the failure is reported, every later step still
 * runs (the souls stop, the store closes, the heartbeat timer that keeps the process alive is
 * cleared), and `stop()` then rejects naming what failed, so the command can exit non-zero
 * instead of hanging. A real node and real LMDB; the fault is in the bus it was given, whose
 * node-control subscriptions fail to end cleanly.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { clusterSubjects, createInProcessBus, type Bus, type MessageHandler, type SubscribeOptions, type Subscription } from "../../../runtime/bus/index.ts";
import { encodeControl, parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-node-stop-");
afterAll(() => dirs.cleanup());

/** The in-process bus, except that subscriptions on node-control subjects end with an error. */
function busWithFailingControlTeardown(cluster: string): Bus {
  const inner = createInProcessBus({ cluster });
  const control = clusterSubjects(cluster).nodeControl("local").slice(0, -1);
  function subscribe(subject: string, a?: MessageHandler | SubscribeOptions, b?: SubscribeOptions): Subscription {
    const sub = typeof a === "function" ? inner.subscribe(subject, a, b) : inner.subscribe(subject, a);
    if (!subject.startsWith(control)) return sub;
    return Object.assign(Object.create(sub) as Subscription, {
      closed: sub.closed.then(() => Promise.reject(new Error(`teardown of ${subject} failed`))),
    });
  }
  return Object.assign(Object.create(inner) as Bus, { subscribe });
}

const config = () => parseClusterConfig({ cluster: "halt", souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 100 } });

describe("a node whose stop has a failing step", () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  afterEach(() => {
    unhandled.length = 0;
  });
  afterAll(() => void process.off("unhandledRejection", onUnhandled));

  it("reports the step, still runs the rest (the store closes), and rejects naming it", async () => {
    const lines: string[] = [];
    const node = await startNode({ config: config(), bus: busWithFailingControlTeardown("halt"), placement: "all", data: dirs.make(), store: { noSync: true }, log: (l) => lines.push(l) });
    await (await node.soul("sam")).perceive({ action: "said", content: "hello", name: "ada" });
    await node.idle();

    await expect(node.stop()).rejects.toThrow(/^node local stopped, but a step failed: stopping node control: teardown of ensoul\.halt\.node\.local\.\w+ failed$/);
    expect(lines.some((l) => /^stopping node control: teardown of .* failed$/.test(l))).toBe(true);
    // Steps after the failing one ran: the store is closed, with the turn committed.
    expect(() => node.store.actorIds()).toThrow(/is closed/);
    await node.stopped;
    expect(node.registry.getSnapshot().context.state).toBe("stopped");
  });

  it("a stop asked for over the bus leaves no unhandled rejection when a step fails", async () => {
    const bus = busWithFailingControlTeardown("halt");
    const node = await startNode({ config: config(), bus, placement: "all", data: dirs.make(), store: { noSync: true }, log: () => undefined });
    await bus.request(clusterSubjects("halt").node("local", "stop"), encodeControl({}), { timeoutMs: 5_000 });
    await node.stopped;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
    await expect(node.stop()).rejects.toThrow(/stopping node control/);
  });
});
