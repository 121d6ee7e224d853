/**
 * `placement: auto` with nodes in this process on a real nats-server: souls spread over the
 * live nodes by rendezvous hashing, a node that joins takes its share (the souls move with
 * their memory), and a node that stops hands its souls to the others.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectClusterBus, parseClusterConfig, rendezvousNode, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { clusterSubjects, decodeEnvelope, isKind, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

describeWithNats("automatic placement", () => {
  const dirs = tempDirs("ensoul-auto-");
  const cluster = uniqueCluster("auto");
  const souls = Array.from({ length: 8 }, (_, i) => `s${i}`);
  let server: NatsServerHandle;
  let bus: Bus;
  const finals: Envelope<"speech">[] = [];
  const whispers: Envelope<"whisper">[] = [];
  const nodes: EnsoulNode[] = [];
  const logs: string[] = [];
  const config = parseClusterConfig({
    cluster,
    placement: "auto",
    souls: souls.map((id) => ({ id, blueprint: "samantha" })),
    // Every node runs the daimon of every soul that may come to it; only the soul's node may let it whisper.
    daimons: souls.map((soul) => ({ soul, builtin: "kothar", mode: "whisper", everyN: 1 })),
    runtime: { heartbeatMs: 200, ackWaitMs: 2_000, failover: { leaseMs: 900 } },
  });
  const start = async (name: string) => {
    const node = await startNode({ config, nodeId: name, nats: { servers: server.url }, data: dirs.make(), store: { noSync: true }, log: (line) => logs.push(`[${name}] ${line}`) });
    nodes.push(node);
    return node;
  };
  const owned = (node: EnsoulNode) => node.status().souls.map((s) => s.id);

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
    await bus.durable(clusterSubjects(cluster).allSouls("says"), "watch", (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final) finals.push(d.envelope);
    });
    bus.subscribe(clusterSubjects(cluster).allSouls("whisper"), (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "whisper")) whispers.push(d.envelope);
    });
  });
  afterAll(async () => {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    await bus?.close();
    await server?.dispose();
    dirs.cleanup();
  });

  it("spreads souls over the live nodes, moves them when a node joins and when one leaves, with their memory", async () => {
    const a = await start("a");
    expect(owned(a).sort()).toEqual([...souls].sort());
    const first = await Promise.all(souls.map((id) => perceive(bus, id, `Hi ${id}, I'm Ada.`, { name: "Ada" })));
    await until(() => first.every((p) => finals.some((f) => f.causation === p.id)), 20_000, "first answers");

    const b = await start("b");
    const expectB = souls.filter((id) => rendezvousNode(id, ["a", "b"]) === "b");
    expect(expectB.length).toBeGreaterThan(0);
    await until(() => owned(b).length === expectB.length && owned(a).length === souls.length - expectB.length, 15_000, () => `the move to b; logs:\n${logs.join("\n")}`);
    expect(owned(b).sort()).toEqual(expectB.sort());
    expect(a.status().souls[0]?.placement).toMatch(/rendezvous over 2 live nodes \(a, b\)/);

    const second = await Promise.all(souls.map((id) => perceive(bus, id, "Do you remember my name?", { name: "Ada" })));
    await until(() => second.every((p) => finals.some((f) => f.causation === p.id)), 20_000, () => `second answers; logs:\n${logs.join("\n")}`);
    for (const id of expectB) expect(b.memory(id).turns).toBe(2);
    // With two nodes up, each perception got one whisper, from the daimon on the soul's node.
    await until(() => whispers.length >= first.length + second.length, 20_000, () => `whispers (${whispers.length})`);
    await new Promise((r) => setTimeout(r, 500));
    for (const id of souls) expect(whispers.filter((w) => w.to === id).length, id).toBe(2);

    // b leaves cleanly: its souls go back to a at once (its lease is released).
    await b.stop();
    const third = await Promise.all(expectB.map((id) => perceive(bus, id, "Still there?", { name: "Ada" })));
    await until(() => third.every((p) => finals.some((f) => f.causation === p.id)), 20_000, () => `third answers; logs:\n${logs.join("\n")}`);
    for (const id of expectB) expect(a.memory(id).turns).toBe(3);
    for (const p of [...first, ...second, ...third]) expect(finals.filter((f) => f.causation === p.id)).toHaveLength(1);
  }, 90_000);
});
