/**
 * Failover under the permissions `ensoul nats-config` writes: a node user (role=node) may
 * append to its souls' histories, hold leases and read them back, so a node with
 * `runtime.failover` runs, and a node on a fresh data directory (its machine lost) rebuilds its
 * souls with every committed turn and answers what was sent meanwhile, once, on a nats-server
 * that enforces them; it compacts a history too (a snapshot that rolls up the soul's subject).
 * A node user may not purge the history stream (one request could wipe every soul's), and a
 * bridge user may not touch the history.
 */
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import { connectNatsBus, decodeEnvelope, historyStreamName, historySubject, isKind } from "../../../runtime/bus/index.ts";
import { inboxPrefixFor } from "../../../runtime/bus/permissions/index.ts";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import type { NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { connectAs, password, startPermissionedServer } from "./securityKit.ts";

const dirs = tempDirs("ensoul-failover-perm-");

describeWithNats("failover under nats-config permissions", () => {
  const cluster = uniqueCluster("foperm");
  const pass = password();
  let server: NatsServerHandle;
  let dispose: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, dispose } = await startPermissionedServer(cluster, [
      { user: "node-a", cluster, role: "node", nodeId: "a", password: pass },
      { user: "web", cluster, role: "bridge", password: pass },
    ]));
  });
  afterAll(async () => {
    await dispose?.();
    dirs.cleanup();
  });

  it("a node keeps its souls' history and leases, and rebuilds a soul on a fresh data directory", async () => {
    const config = parseClusterConfig({ cluster, nodes: ["a"], souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 200, failover: { leaseMs: 600, snapshotEvery: 2 } } });
    const nats = { servers: server.url, user: "node-a", pass, inboxPrefix: inboxPrefixFor("node-a") };
    const lines: string[] = [];
    const first = await startNode({ config, nats, nodeId: "a", data: dirs.make(), store: { noSync: true }, log: (l) => lines.push(l) });
    // A client of its own (a node user here), which outlives both nodes: final answers by the perception they answer.
    const watcher = await connectNatsBus({ servers: server.url, cluster, user: "node-a", pass, inboxPrefix: inboxPrefixFor("node-a") });
    const answers: string[] = [];
    // From the stream, as a bridge reads them: a turn's speech the restored soul publishes again is deduplicated there.
    const sub = await watcher.durable(`ensoul.${cluster}.soul.sam.says`, "watch", (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && d.envelope.causation) answers.push(d.envelope.causation);
    });
    const greeting = await perceive(watcher, "sam", "Hi, I'm Ada.", { name: "Ada" });
    await until(() => answers.includes(greeting.id), 15_000, () => `an answer; node log:\n${lines.join("\n")}`);
    // A second turn: the history reaches snapshotEvery and is compacted (a snapshot rolling up the soul's subject, which the node user may publish).
    const second = await perceive(watcher, "sam", "How are you?", { name: "Ada" });
    await until(() => answers.includes(second.id), 15_000, () => `the second answer; node log:\n${lines.join("\n")}`);
    await first.idle();
    const before = first.memory("sam");
    await first.stop();
    // The machine is gone (the next start has a fresh data directory); someone writes meanwhile.
    const waiting = await perceive(watcher, "sam", "Are you still there?", { name: "Ada" });

    const restarted = await startNode({ config, nats, nodeId: "a", data: dirs.make(), store: { noSync: true }, log: (l) => lines.push(l) });
    try {
      expect(lines.join("\n")).not.toMatch(/not compacted/);
      expect(lines.join("\n")).toMatch(/soul sam rebuilt from its replicated history \(0 turns\)/);
      await until(() => answers.filter((c) => c === waiting.id).length > 0, 15_000, () => `the answer to what waited; node log:\n${lines.join("\n")}`);
      await restarted.idle();
      const after = restarted.memory("sam");
      expect(after.turns).toBe(before.turns + 1);
      const contents = (m: typeof after) => (m.workingMemory as { memories: { content: string }[] }).memories.map((x) => x.content);
      expect(contents(after).slice(0, contents(before).length)).toEqual(contents(before));
      // Every perception answered once, across the loss.
      expect(answers.filter((c) => c === waiting.id)).toHaveLength(1);
      expect(answers.filter((c) => c === greeting.id)).toHaveLength(1);
      expect(answers.filter((c) => c === second.id)).toHaveLength(1);
    } finally {
      await sub.stop();
      await restarted.stop();
      await watcher.close();
    }
  }, 60_000);

  it("a node user may not use the history stream's purge API, on another soul's records or on all: the records stay", async () => {
    const bus = await connectNatsBus({ servers: server.url, cluster, user: "node-a", pass, inboxPrefix: inboxPrefixFor("node-a") });
    const node = await connectAs(server.url, "node-a", pass);
    try {
      const log = bus.soulHistory!();
      const first = await log.append("ivy", new Uint8Array([1]), 0);
      await log.append("ivy", new Uint8Array([2]), first);
      const jsm = await jetstreamManager(node.nc);
      const stream = historyStreamName(cluster);
      await expect(jsm.streams.purge(stream, { filter: historySubject(cluster, "ivy") })).rejects.toThrow(/permission|timeout/i);
      await node.violation("publish", `$JS.API.STREAM.PURGE.${stream}`);
      await expect(jsm.streams.purge(stream)).rejects.toThrow(/permission|timeout/i);
      expect((await log.read("ivy")).entries.map((e) => [...e.data])).toEqual([[1], [2]]);
    } finally {
      await node.nc.close();
      await bus.close();
    }
  }, 30_000);

  it("what SECURITY.md says a node user can still destroy is so: one message with Nats-Rollup: all removes every soul's history", async () => {
    // Its own cluster, so the other tests' souls are left alone.
    const other = uniqueCluster("foperm-wipe");
    const { server: wiped, dispose: disposeWiped } = await startPermissionedServer(other, [{ user: "node-x", cluster: other, role: "node", nodeId: "x", password: pass }]);
    const bus = await connectNatsBus({ servers: wiped.url, cluster: other, user: "node-x", pass, inboxPrefix: inboxPrefixFor("node-x") });
    const node = await connectAs(wiped.url, "node-x", pass);
    try {
      const log = bus.soulHistory!();
      for (const soul of ["ada", "bob"]) await log.append(soul, new Uint8Array([1]), 0);
      const all = headers();
      all.set("Nats-Rollup", "all");
      await jetstream(node.nc).publish(historySubject(other, "ada"), new Uint8Array([0]), { headers: all });
      expect((await log.read("bob")).entries).toEqual([]);
      expect((await log.read("ada")).entries.map((e) => [...e.data])).toEqual([[0]]);
    } finally {
      await node.nc.close();
      await bus.close();
      await disposeWiped();
    }
  }, 30_000);

  it("a bridge user may not append to a soul's history", async () => {
    const bus = await connectNatsBus({ servers: server.url, cluster, user: "web", pass, inboxPrefix: inboxPrefixFor("web") });
    try {
      await expect(bus.soulHistory!().append("sam", new Uint8Array([1]), 0)).rejects.toThrow(/permission|timeout|no responders/i);
    } finally {
      await bus.close();
    }
  }, 30_000);
});
