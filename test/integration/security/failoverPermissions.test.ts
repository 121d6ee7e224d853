/**
 * Failover under the permissions `ensoul nats-config` writes: a node user (role=node) may
 * append to its souls' histories, hold leases and read them back, so a node with
 * `runtime.failover` runs, and a node on a fresh data directory rebuilds its souls, on a
 * nats-server that enforces them. A bridge user may not touch the history.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectNatsBus } from "../../../runtime/bus/index.ts";
import { inboxPrefixFor, natsServerConfig } from "../../../runtime/bus/permissions/index.ts";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { freePort, startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { password } from "./securityKit.ts";

const dirs = tempDirs("ensoul-failover-perm-");

describeWithNats("failover under nats-config permissions", () => {
  const cluster = uniqueCluster("foperm");
  const pass = password();
  let server: NatsServerHandle;
  let storeDir: string;

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), "ensoul-failover-perm-js-"));
    const port = await freePort();
    const config = natsServerConfig({
      cluster,
      users: [
        { user: "node-a", cluster, role: "node", nodeId: "a", password: pass },
        { user: "web", cluster, role: "bridge", password: pass },
      ],
      jetstream: { storeDir },
      port,
    });
    server = await startNatsServer({ jetstream: false, config, port });
  });
  afterAll(async () => {
    await server?.dispose();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
    dirs.cleanup();
  });

  it("a node keeps its souls' history and leases, and rebuilds a soul on a fresh data directory", async () => {
    const config = parseClusterConfig({ cluster, nodes: ["a"], souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 200, failover: { leaseMs: 600 } } });
    const nats = { servers: server.url, user: "node-a", pass, inboxPrefix: inboxPrefixFor("node-a") };
    const lines: string[] = [];
    const first = await startNode({ config, nats, nodeId: "a", data: dirs.make(), store: { noSync: true }, log: (l) => lines.push(l) });
    const said: string[] = [];
    const sub = first.bus.subscribe(`ensoul.${cluster}.soul.sam.says`, () => void said.push("x"));
    await perceive(first.bus, "sam", "Hi, I'm Ada.", { name: "Ada" });
    await until(() => said.length > 0, 15_000, () => `an answer; node log:\n${lines.join("\n")}`);
    await first.idle();
    const before = first.memory("sam");
    sub.unsubscribe();
    await first.stop();

    const second = await startNode({ config, nats, nodeId: "a", data: dirs.make(), store: { noSync: true }, log: (l) => lines.push(l) });
    try {
      expect(second.memory("sam")).toMatchObject({ turns: before.turns, workingMemory: before.workingMemory });
      expect(lines.join("\n")).toMatch(/soul sam rebuilt from its replicated history \(1 turns\)/);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it("a bridge user may not append to a soul's history", async () => {
    const bus = await connectNatsBus({ servers: server.url, cluster, user: "web", pass, inboxPrefix: inboxPrefixFor("web") });
    try {
      await expect(bus.soulHistory!().append("sam", new Uint8Array([1]), 0)).rejects.toThrow(/permission|timeout|no responders/i);
    } finally {
      await bus.close();
    }
  }, 30_000);
});
