/**
 * Backpressure on a real nats-server: a burst for one soul beyond its `maxQueued` waits in
 * the stream, unacked, instead of piling up in the soul. Every perception is answered exactly
 * once and in order, none is dead-lettered or redelivered, the soul's queue never holds more
 * than its bound, and another soul of the node goes on meanwhile. The in-process bus's
 * consumer waits the same way.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { pause, until, watchDead, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { natsNodes } from "../../support/cluster/natsNodes.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { deferred } from "../../support/soul/helpers.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const BOUND = 5;
const BURST = 40;

/** Its turn for `block` waits until the test opens the gate, so the burst piles up behind it. */
let gate = deferred();
let started = deferred();
const gated: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  if (content === "block") {
    started.resolve();
    await gate.promise;
  }
  useActions().speak(`echo: ${content}`);
  return workingMemory;
};
const gatedSoul = defineSoul({ name: "Gated", persona: "A soul that waits when told to.", initialProcess: gated, processes: { gated } });

describeWithNats("backpressure from a soul's bound to the JetStream consumer", () => {
  const fixture = natsNodes();
  const { nodes } = fixture;
  // Registered after the fixture's, so it runs first (vitest stacks after-hooks): a turn held at the gate would keep its node from stopping.
  afterEach(() => gate.resolve());

  it("holds a burst beyond the bound in the stream: each perception answered once, in order, none dead-lettered, the queue never past the bound", async () => {
    gate = deferred();
    started = deferred();
    const cluster = uniqueCluster("bound");
    const config = parseClusterConfig({
      cluster,
      souls: [
        { id: "burst", blueprint: gatedSoul, maxQueued: BOUND },
        { id: "other", blueprint: echoSoul },
      ],
      // A short ack wait: the held-back messages outlive several of them, kept alive, not redelivered.
      // Few slots: a lane waiting for room must give its slots up, or the other soul would wait too.
      runtime: { heartbeatMs: 200, ackWaitMs: 600, maxInFlight: 4 },
    });
    const logged: string[] = [];
    const node = await fixture.startNode({ config, nodeId: "n1", log: (line) => logged.push(line) });
    const bus = await fixture.client(cluster);
    const subjects = clusterSubjects(cluster);
    const says = watchEnvelopes(bus, subjects.allSouls("says"), "speech");
    const dead = watchDead(bus, subjects.dead);

    const soul = await node.soul("burst");
    let most = 0;
    soul.actor.subscribe((s) => (most = Math.max(most, s.context.queue.length)));

    const sent = [await perceive(bus, "burst", "block")];
    await started.promise;
    for (let i = 0; i < BURST; i++) sent.push(await perceive(bus, "burst", `m${i}`));
    await until(() => soul.state().pending >= BOUND, 10_000, "the soul's queue to fill to its bound");

    // The rest waits in the stream; the other soul is answered meanwhile.
    const other = await perceive(bus, "other", "meanwhile");
    await says.next((e) => e.body.final && e.causation === other.id, 10_000, "the other soul's answer while the first is full");
    await pause(1_500);
    expect(soul.state()).toMatchObject({ pending: BOUND, running: true, turn: 0 });

    gate.resolve();
    await until(() => says.seen.filter((e) => e.body.final && e.subject === subjects.says("burst")).length >= sent.length, 20_000, "an answer to every perception of the burst");
    await node.idle();
    await pause(300);

    const finals = says.seen.filter((e) => e.body.final && e.subject === subjects.says("burst"));
    expect(finals.map((e) => e.causation)).toEqual(sent.map((e) => e.id));
    expect(finals.map((e) => e.body.text)).toEqual(sent.map((e) => `echo: ${e.body.content}`));
    expect(dead.seen).toEqual([]);
    expect(node.status().counters).toMatchObject({ perceptions: BURST + 2, duplicates: 0, dead: 0 });
    expect(most).toBeLessThanOrEqual(BOUND);
    expect(soul.state().turn).toBe(BURST + 1);
    expect(logged.filter((line) => /waiting, its limit/.test(line))).toEqual([]);
  });

  it("hands back what waits for room when the node stops: the next start answers every perception once, in order", async () => {
    gate = deferred();
    started = deferred();
    const cluster = uniqueCluster("bound-stop");
    const data = fixture.dirs.make();
    const config = parseClusterConfig({ cluster, souls: [{ id: "burst", blueprint: gatedSoul, maxQueued: 3 }], runtime: { heartbeatMs: 200, ackWaitMs: 2_000 } });
    const start = () => fixture.startNode({ config, nodeId: "n1", data });
    const first = await start();
    const bus = await fixture.client(cluster);
    const subjects = clusterSubjects(cluster);
    const says = watchEnvelopes(bus, subjects.says("burst"), "speech");
    const dead = watchDead(bus, subjects.dead);
    const soul = await first.soul("burst");
    const sent = [await perceive(bus, "burst", "block")];
    await started.promise;
    for (let i = 0; i < 10; i++) sent.push(await perceive(bus, "burst", `m${i}`));
    await until(() => soul.state().pending >= 3, 10_000, "the soul's queue to fill to its bound");

    const stopping = first.stop();
    gate.resolve();
    await stopping;
    nodes.splice(nodes.indexOf(first), 1);
    const second = await start();
    await until(() => says.seen.filter((e) => e.body.final).length >= sent.length, 20_000, "an answer to every perception after the restart");
    await second.idle();
    await pause(300);
    expect(says.seen.filter((e) => e.body.final).map((e) => e.causation)).toEqual(sent.map((e) => e.id));
    expect(dead.seen).toEqual([]);
  });
});

describe("backpressure on the in-process bus", () => {
  const dirs = tempDirs();
  afterAll(() => dirs.cleanup());

  it("waits for room instead of handing the soul what it would refuse: every perception answered once, in order, none dead-lettered", async () => {
    gate = deferred();
    started = deferred();
    const config = parseClusterConfig({ cluster: "local-bound", souls: [{ id: "burst", blueprint: gatedSoul }], runtime: { heartbeatMs: 100, maxQueued: 3 } });
    const logged: string[] = [];
    const node = await startNode({ config, data: dirs.make(), store: { noSync: true }, log: (line) => logged.push(line) });
    try {
      const subjects = clusterSubjects("local-bound");
      const says = watchEnvelopes(node.bus, subjects.says("burst"), "speech");
      const dead = watchDead(node.bus, subjects.dead);
      const soul = await node.soul("burst");
      let most = 0;
      soul.actor.subscribe((s) => (most = Math.max(most, s.context.queue.length)));
      const sent = [await perceive(node.bus, "burst", "block")];
      await started.promise;
      for (let i = 0; i < 12; i++) sent.push(await perceive(node.bus, "burst", `m${i}`));
      await until(() => soul.state().pending >= 3, 10_000, "the soul's queue to fill to its bound");
      // Longer than the redelivery backoff of a refused perception: nothing is refused meanwhile.
      await pause(500);
      gate.resolve();
      await until(() => says.seen.filter((e) => e.body.final).length >= sent.length, 10_000, "an answer to every perception");
      await node.idle();
      expect(says.seen.filter((e) => e.body.final).map((e) => e.causation)).toEqual(sent.map((e) => e.id));
      expect(dead.seen).toEqual([]);
      expect(node.status().counters).toMatchObject({ perceptions: sent.length, duplicates: 0, dead: 0 });
      expect(most).toBeLessThanOrEqual(3);
      // Nothing was handed to the soul to be refused (and redelivered later).
      expect(logged.filter((line) => /waiting, its limit/.test(line))).toEqual([]);
    } finally {
      gate.resolve();
      await node.stop();
    }
  });
});
