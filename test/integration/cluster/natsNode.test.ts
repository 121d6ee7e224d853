/**
 * A node on a real nats-server, in this process, with the test as a second client: NATS
 * restarts, node restarts, and the concurrent perception intake keeping each soul's order.
 */
import { expect, it } from "vitest";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { parseClusterConfig } from "../../../runtime/node/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { pause, until, watchDead, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { natsNodes } from "../../support/cluster/natsNodes.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";

describeWithNats("a node on a real nats-server", () => {
  const fixture = natsNodes();
  const { dirs, nodes } = fixture;
  const config = (cluster: string, souls = ["echo"], runtime: Record<string, number> = {}) =>
    parseClusterConfig({ cluster, souls: souls.map((id) => ({ id, blueprint: echoSoul })), runtime: { heartbeatMs: 200, ackWaitMs: 2_000, ...runtime } });
  const start = (cluster: string, data: string, souls?: string[], runtime?: Record<string, number>) => fixture.startNode({ config: config(cluster, souls, runtime), nodeId: "n1", data });
  const client = (cluster: string) => fixture.client(cluster);

  it("survives a nats-server restart: a perception published during the outage is answered once it is back", async () => {
    const cluster = uniqueCluster("restart");
    const node = await start(cluster, dirs.make());
    const bus = await client(cluster);
    const says = watchEnvelopes(bus, clusterSubjects(cluster).says("echo"), "speech");
    const before = await perceive(bus, "echo", "before");
    await says.next((e) => e.body.final && e.causation === before.id, 5_000, "the answer before the restart");

    await fixture.server.stop();
    const during = perceive(bus, "echo", "during"); // waits for the stream's ack, across the outage
    await pause(300);
    await fixture.server.restart();
    const env = await during;
    const answer = await says.next((e) => e.body.final && e.causation === env.id, 15_000, "the answer after the restart");
    expect(answer.body.text).toBe("echo: during");
    await node.idle();
    expect((await node.soul("echo")).state().turn).toBe(2);
  });

  it("keeps each soul's perceptions in publish order while taking many souls' at once", async () => {
    const cluster = uniqueCluster("order");
    const souls = Array.from({ length: 8 }, (_, i) => `s${i}`);
    const node = await start(cluster, dirs.make(), souls, { maxInFlight: 64 });
    const bus = await client(cluster);
    const sent = new Map<string, string[]>(souls.map((s) => [s, []]));
    const publishing: Promise<unknown>[] = [];
    for (let i = 0; i < 25; i++) {
      for (const s of souls) {
        publishing.push(perceive(bus, s, `m${i}`).then((env) => (sent.get(s) as string[])[i] = env.id));
      }
    }
    await Promise.all(publishing);
    await until(() => node.status().souls.every((s) => s.turns === 25), 20_000, "every soul to take 25 turns");
    for (const s of souls) {
      const memories = (node.memory(s).workingMemory as { memories: { metadata?: { perceptionId?: string } }[] }).memories;
      const order = memories.map((m) => m.metadata?.perceptionId).filter((id): id is string => id !== undefined);
      expect(order).toEqual(sent.get(s));
    }
  });

  it("processes what was published while it was down, once, when it starts again", async () => {
    const cluster = uniqueCluster("down");
    const data = dirs.make();
    const first = await start(cluster, data);
    const bus = await client(cluster);
    const says = watchEnvelopes(bus, clusterSubjects(cluster).says("echo"), "speech");
    const a = await perceive(bus, "echo", "one");
    await says.next((e) => e.body.final && e.causation === a.id, 5_000, "the first answer");
    await first.stop();
    nodes.splice(nodes.indexOf(first), 1);

    const whileDown = [];
    for (let i = 0; i < 5; i++) whileDown.push(await perceive(bus, "echo", `while down ${i}`));
    const second = await start(cluster, data);
    for (const env of whileDown) await says.next((e) => e.body.final && e.causation === env.id, 10_000, `the answer to ${env.body.content}`);
    await second.idle();
    await pause(200);
    expect((await second.soul("echo")).state().turn).toBe(6);
    // Each perception answered exactly once (one final per cause).
    const finals = says.seen.filter((e) => e.body.final);
    expect(new Set(finals.map((e) => e.causation)).size).toBe(finals.length);
  });

  it("refuses to start as a node that is already running", async () => {
    const cluster = uniqueCluster("twin");
    await start(cluster, dirs.make());
    await expect(start(cluster, dirs.make())).rejects.toThrow(`node 'n1' of cluster '${cluster}' is already running (pid ${process.pid})`);
  });

  it("dead-letters an unknown soul's perception once, from the first node only", async () => {
    const cluster = uniqueCluster("unknown");
    const cfg = parseClusterConfig({
      cluster,
      nodes: ["a", "b"],
      souls: [
        { id: "alpha", blueprint: echoSoul, node: "a" },
        { id: "beta", blueprint: echoSoul, node: "b" },
      ],
      runtime: { heartbeatMs: 200, ackWaitMs: 2_000 },
    });
    for (const nodeId of ["a", "b"]) {
      await fixture.startNode({ config: cfg, nats: { servers: fixture.server.url }, nodeId });
    }
    const bus = await client(cluster);
    const dead = watchDead(bus, clusterSubjects(cluster).dead);
    const says = watchEnvelopes(bus, clusterSubjects(cluster).allSouls("says"), "speech");
    await perceive(bus, "nobody", "hello?");
    const toBeta = await perceive(bus, "beta", "hi beta");
    await says.next((e) => e.body.final && e.causation === toBeta.id, 5_000, "beta's answer (from node b)");
    await dead.next((d) => d.subject.endsWith(".nobody.perceive"), 5_000, "the dead letter");
    await pause(300);
    expect(dead.seen).toHaveLength(1);
    expect(dead.seen[0].reason).toMatch(/^unknown soul 'nobody'/);
    expect(nodes.map((n) => n.souls)).toEqual([["alpha"], ["beta"]]);
  });
});
