/**
 * A node whose souls' entries do not fit in one NATS message (8,000 souls with 128-character
 * ids: ~1.5 MB of entries, over the server's 1 MiB max_payload), on a real nats-server: its
 * heartbeat still goes out, partial; a client still finds every soul (findSoul asks the node),
 * pages through them all, and `ensoul status` lists them all.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Bus } from "../../../runtime/bus/index.ts";
import { statusCommand } from "../../../runtime/cli/statusCommand.ts";
import { ClusterClientError, connectClusterBus, decodeControl, findSoul, nodeSouls, parseClusterConfig, requestControl, startNode, type EnsoulNode, type NodeStatus } from "../../../runtime/node/index.ts";
import { MAX_REPLY_BYTES } from "../../../runtime/node/controlProtocol.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const COUNT = 8_000;
const ids = Array.from({ length: COUNT }, (_, i) => `soul-${String(i).padStart(5, "0")}-`.padEnd(128, "x"));

describeWithNats("a node with more souls than one message holds, on a real nats-server", () => {
  const dirs = tempDirs();
  const cluster = uniqueCluster("many");
  let server: NatsServerHandle;
  let node: EnsoulNode;
  let bus: Bus;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const config = parseClusterConfig({ cluster, souls: ids.map((id) => ({ id, blueprint: echoSoul })), runtime: { heartbeatMs: 250 } });
    node = await startNode({ config, nats: { servers: server.url }, nodeId: "n1", data: dirs.make(), store: { noSync: true }, log: () => undefined });
    bus = await connectClusterBus({ servers: server.url, cluster });
  });
  afterAll(async () => {
    await bus?.close().catch(() => undefined);
    await node?.stop().catch(() => undefined);
    await server?.dispose();
    dirs.cleanup();
  });

  const heartbeat = () =>
    new Promise<{ size: number; status: NodeStatus }>((resolve) => {
      const sub = bus.subscribe(`ensoul.${cluster}.node.n1.heartbeat`, (msg) => {
        sub.unsubscribe();
        resolve({ size: msg.data.length, status: decodeControl<NodeStatus>(msg.data) as NodeStatus });
      });
    });

  it("publishes a heartbeat under MAX_REPLY_BYTES that lists what fits and says soulsPartial", async () => {
    const { size, status } = await heartbeat();
    expect(size).toBeLessThanOrEqual(MAX_REPLY_BYTES);
    expect(status).toMatchObject({ node: "n1", state: "running", soulCount: COUNT, soulsPartial: true });
    expect(status.souls.length).toBeGreaterThan(1_000);
    expect(status.souls.length).toBeLessThan(COUNT);
  });

  it("finds, by asking the node, a soul the partial heartbeat left out", async () => {
    const { status } = await heartbeat();
    const missing = ids[COUNT - 1] as string;
    expect(status.souls.some((s) => s.id === missing)).toBe(false);
    const where = await findSoul(bus, missing, 2_000);
    expect(where.status.node).toBe("n1");
    expect(where.status.souls.map((s) => s.id)).toEqual([missing]);
    await expect(findSoul(bus, "nobody-here", 1_000)).rejects.toThrow(/unknown soul 'nobody-here' .* and 7980 more/);
  });

  it("answers status with soulIds, pages through every soul, and refuses a bad request", async () => {
    const some = await requestControl<NodeStatus>(bus, "n1", "status", { soulIds: [ids[4_000], ids[7]] });
    expect(some.souls.map((s) => s.id)).toEqual([ids[4_000], ids[7]]);
    const { status } = await heartbeat();
    const all = await nodeSouls(bus, status, 3_000);
    expect(all.map((s) => s.id)).toEqual(ids);
    await expect(requestControl(bus, "n1", "status", { soulIds: "x" })).rejects.toThrow(ClusterClientError);
    await expect(requestControl(bus, "n1", "status", { after: "nobody" })).rejects.toThrow(/no soul 'nobody'/);
  });

  it("lists every soul in `ensoul status`", async () => {
    const lines: string[] = [];
    const out = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).split("\n").filter(Boolean)), done()) });
    const [status] = await statusCommand({ nats: { servers: server.url }, cluster, waitMs: 1_000, out });
    expect(status?.souls).toHaveLength(COUNT);
    expect(status?.soulsPartial).toBeUndefined();
    expect(lines.find((l) => l.startsWith("node n1"))).toContain(`${COUNT} souls`);
    expect(lines.filter((l) => l.startsWith("  soul-"))).toHaveLength(COUNT);
  });
});
