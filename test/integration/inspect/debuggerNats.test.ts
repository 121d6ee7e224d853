/**
 * The debugger as one more client of a cluster on a real nats-server: two nodes of one config,
 * the debugger on a third connection, showing the souls of both with the node hosting each,
 * reaching the right node for a soul's turns, and following a node that stops.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startDebugger, type DebuggerHandle, type FleetSnapshot } from "../../../runtime/inspect/index.ts";
import { connectClusterBus, parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import type { Bus } from "../../../runtime/bus/index.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { pause } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

describeWithNats("the debugger over NATS", () => {
  const dirs = tempDirs();
  const cluster = uniqueCluster("debug");
  let server: NatsServerHandle;
  const nodes: Record<string, EnsoulNode> = {};
  let bus: Bus;
  let debug: DebuggerHandle;
  const fleet = async () => (await (await fetch(new URL("/api/souls", debug.url))).json()) as FleetSnapshot;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const config = parseClusterConfig({
      cluster,
      nodes: ["a", "b"],
      souls: [
        { id: "alpha", blueprint: echoSoul, node: "a" },
        { id: "beta", blueprint: echoSoul, node: "b" },
      ],
      runtime: { heartbeatMs: 200, ackWaitMs: 2_000 },
    });
    for (const nodeId of ["a", "b"]) {
      nodes[nodeId] = await startNode({ config, nats: { servers: server.url }, nodeId, data: dirs.make(), store: { noSync: true }, log: () => undefined });
    }
    bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
    // Asked for node a's status only: the nodes it names elsewhere are asked too.
    debug = await startDebugger({ bus, port: 0, nodes: ["a"] });
  }, 30_000);
  afterAll(async () => {
    await debug?.stop();
    await Promise.all(Object.values(nodes).map((n) => n.stop().catch(() => undefined)));
    await bus?.close();
    await server?.dispose();
    dirs.cleanup();
  });

  it("shows the souls of both nodes, each with the node hosting it, without waiting for a heartbeat", async () => {
    const now = await fleet();
    expect(now.cluster).toBe(cluster);
    expect(now.souls.map((s) => [s.id, s.node])).toEqual([
      ["alpha", "a"],
      ["beta", "b"],
    ]);
    expect(now.nodes.map((n) => [n.node, n.state, n.bus])).toEqual([
      ["a", "running", "nats"],
      ["b", "running", "nats"],
    ]);
  });

  it("streams a turn on node b and reads its turns from node b", async () => {
    const sse = await openSse(new URL("/api/events", debug.url).href, {});
    try {
      const env = await perceive(bus, "beta", "hello from afar");
      const events = await sse.until((all) => all.some((e) => e.event === "soul.turn" && JSON.parse(e.data).data?.perceptionId === env.id), 10_000);
      expect(JSON.parse(events.find((e) => e.event === "soul.turn")!.data)).toMatchObject({ soulId: "beta", data: { node: "b", turn: 1 } });
    } finally {
      sse.close();
    }
    const res = await fetch(new URL("/api/souls/beta/turns", debug.url));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { soulId: string; turns: { turn: number; perception?: { content?: string } }[] };
    expect(body.soulId).toBe("beta");
    expect(body.turns.map((t) => [t.turn, t.perception?.content])).toEqual([[1, "hello from afar"]]);
    const detail = await fetch(new URL("/api/souls/alpha", debug.url));
    expect(detail.status).toBe(200);
    expect(((await detail.json()) as { soul: { node: string } }).soul.node).toBe("a");
  });

  it("drops a node that stops and shows its souls stopped", async () => {
    await nodes.b!.stop();
    let last: FleetSnapshot | undefined;
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      last = await fleet();
      if (last.souls.find((s) => s.id === "beta")?.status === "stopped" && !last.nodes.some((n) => n.node === "b")) break;
      await pause(50);
    }
    expect(last?.souls.find((s) => s.id === "beta")).toMatchObject({ node: "b", status: "stopped" });
    expect(last?.nodes.map((n) => n.node)).toEqual(["a"]);
    expect(last?.souls.find((s) => s.id === "alpha")).toMatchObject({ node: "a", status: expect.stringMatching(/^(active|passivated)$/) });
    // Its node gone, the soul's history cannot be read now: the node did not answer.
    expect((await fetch(new URL("/api/souls/beta/turns", debug.url))).status).toBe(502);
  });
});
