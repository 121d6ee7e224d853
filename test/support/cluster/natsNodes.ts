/**
 * What the tests of nodes on a real nats-server share: one JetStream server for the describe
 * block, and the nodes and client buses each test starts, stopped after it (also when it
 * fails), with their data directories removed at the end. Call it inside a describeWithNats
 * block, which skips (or, in CI, fails) when nats-server is missing.
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Bus } from "../../../runtime/bus/index.ts";
import { connectClusterBus, startNode, type EnsoulNode, type StartNodeOptions } from "../../../runtime/node/index.ts";
import { startNatsServer, type NatsServerHandle } from "../nats/natsServer.ts";
import { tempDirs } from "../tempDirs.ts";

export function natsNodes() {
  const dirs = tempDirs();
  const nodes: EnsoulNode[] = [];
  const buses: Bus[] = [];
  let server: NatsServerHandle | undefined;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop().catch(() => undefined)));
    await Promise.all(buses.splice(0).map((b) => b.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await server?.dispose();
    dirs.cleanup();
  });
  const running = (): NatsServerHandle => {
    if (!server) throw new Error("nats-server is not running: natsNodes() belongs inside a describeWithNats block");
    return server;
  };
  return {
    dirs,
    /** The nodes still to be stopped after the test (a test that stops one itself takes it out). */
    nodes,
    get server(): NatsServerHandle {
      return running();
    },
    /** A node on the server, reconnecting every 100 ms, on LMDB without fsync in a fresh directory, quiet: each overridable. */
    async startNode(o: StartNodeOptions & { nodeId: string }): Promise<EnsoulNode> {
      const node = await startNode({ nats: { servers: running().url, reconnectTimeWaitMs: 100 }, data: dirs.make(), store: { noSync: true }, log: () => undefined, ...o });
      nodes.push(node);
      return node;
    },
    /** A client of the cluster, closed after the test. */
    async client(cluster: string): Promise<Bus> {
      const bus = await connectClusterBus({ servers: running().url, cluster, reconnectTimeWaitMs: 100 });
      buses.push(bus);
      return bus;
    },
  };
}
