/**
 * Chaos scenario 2, machine loss: three `ensoul up` processes with `placement: auto` on a real
 * nats-server; the node running the most souls is SIGKILLed for good, while people keep
 * talking to every soul. Its souls must answer from the other two nodes with their memory
 * intact (every committed turn), every perception answered exactly once, and the scenario
 * prints the time from the kill until each moved soul answered again.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, decodeEnvelope, isKind, type Bus, type Envelope } from "../../runtime/bus/index.ts";
import { connectClusterBus, findSoul, requestControl, type NodeStatus, type SoulMemoryReply } from "../../runtime/node/index.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { percentile, reportChaos } from "../support/chaos/chaosReport.ts";
import { until } from "../support/cluster/busWatch.ts";
import { runEnsoul, spawnNode, type NodeProcess } from "../support/cluster/cliProcess.ts";
import { perceive, uniqueCluster } from "../support/cluster/clusterKit.ts";
import { describeWithNats } from "../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../support/nats/natsServer.ts";
import { tempDirs } from "../support/tempDirs.ts";

const SOULS = chaosSize({ short: 6, full: 30 });
// Long enough that a node starved of CPU on a busy machine still renews in time.
const LEASE_MS = 3_000;

describeWithNats("chaos: a machine lost for good under automatic placement", () => {
  const dirs = tempDirs("ensoul-chaos-loss-");
  const cluster = uniqueCluster("loss");
  const souls = Array.from({ length: SOULS }, (_, i) => `s${i}`);
  let server: NatsServerHandle;
  let bus: Bus;
  const nodes = new Map<string, NodeProcess>();
  const finals: (Envelope<"speech"> & { at: number })[] = [];

  const memoryOf = async (soul: string) => {
    const where = await findSoul(bus, soul, 5_000);
    return { node: where.status.node, memory: await requestControl<SoulMemoryReply>(bus, where.status.node, "memory", { soulId: soul }) };
  };
  const answeredAll = (ids: readonly string[], ms: number) =>
    until(
      () => ids.every((id) => finals.some((f) => f.causation === id)),
      ms,
      () => `answers to all of ${ids.length} perceptions (${ids.filter((id) => !finals.some((f) => f.causation === id)).length} missing); the nodes said:\n${[...nodes.values()].map((n) => n.output().split("\n").slice(-40).join("\n")).join("\n---\n")}`,
    );

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const dir = dirs.make();
    const configFile = join(dir, "cluster.yaml");
    writeFileSync(
      configFile,
      [`cluster: ${cluster}`, "placement: auto", "souls:", ...souls.map((id) => `  - { id: ${id}, blueprint: samantha }`), `runtime: { heartbeatMs: 250, ackWaitMs: 2000, failover: { leaseMs: ${LEASE_MS} } }`, ""].join("\n"),
    );
    bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
    await bus.durable(clusterSubjects(cluster).allSouls("says"), "chaos-watch", (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final) finals.push({ ...d.envelope, at: Date.now() });
    });
    for (const name of ["a", "b", "c"]) nodes.set(name, spawnNode([configFile, "--node", name, "--nats", server.url, "--data", join(dir, "data")]));
    await Promise.all([...nodes.values()].map((n) => n.waitFor(/ensoul up: ready/, 40_000)));
    await Promise.all([...nodes.values()].map((n) => n.waitFor(/live nodes a, b, c/, 20_000)));
  }, 90_000);
  afterAll(async () => {
    await Promise.all([...nodes.values()].map((n) => n.kill("SIGKILL")));
    await bus?.close();
    await server?.dispose();
    dirs.cleanup();
  });

  it(
    "the lost node's souls answer from the others with every committed turn, each perception once",
    async () => {
      const sent: string[] = [];
      for (const [i, soul] of souls.entries()) sent.push((await perceive(bus, soul, `Hi, I'm U${i}.`, { name: `U${i}` })).id);
      await answeredAll(sent, 30_000);
      for (const [i, soul] of souls.entries()) sent.push((await perceive(bus, soul, `I like thing ${i}.`, { name: `U${i}` })).id);
      await answeredAll(sent, 30_000);

      // Where each soul runs, and its memory, before the loss.
      const statuses = await Promise.all(["a", "b", "c"].map((n) => requestControl<NodeStatus>(bus, n, "status")));
      const spread = new Map(statuses.map((s) => [s.node, s.souls.map((e) => e.id)]));
      expect([...spread.values()].flat().sort()).toEqual([...souls].sort());
      for (const s of statuses) for (const e of s.souls) expect(e.placement, `${e.id} on ${s.node}`).toMatch(/placement: auto, rendezvous over 3 live nodes/);
      // `ensoul status` says where each soul lives and why.
      const shown = await runEnsoul(["status", "--nats", server.url, "--cluster", cluster]);
      for (const id of souls) expect(shown.stdout).toMatch(new RegExp(`^  ${id} .*\\(placement: auto, rendezvous over 3 live nodes \\(a, b, c\\)\\)$`, "m"));
      const [victim, victims] = [...spread.entries()].sort((x, y) => y[1].length - x[1].length)[0] as [string, string[]];
      const before = new Map(await Promise.all(victims.map(async (id) => [id, (await memoryOf(id)).memory] as const)));

      const killedAt = Date.now();
      expect(await nodes.get(victim)!.kill("SIGKILL")).not.toBe(0);
      nodes.delete(victim);
      // People keep talking to every soul, moved or not.
      const after: string[] = [];
      for (const [i, soul] of souls.entries()) after.push((await perceive(bus, soul, `Do you remember me, ${i}?`, { name: `U${i}` })).id);
      await answeredAll(after, 60_000);

      const recovery: number[] = [];
      for (const id of victims) {
        const { node, memory } = await memoryOf(id);
        expect(node).not.toBe(victim);
        const old = before.get(id) as SoulMemoryReply;
        expect(memory.turns).toBe(old.turns + 1);
        const contents = (m: SoulMemoryReply) => (m.workingMemory as { memories: { content: string }[] }).memories.map((x) => x.content);
        expect(contents(memory).slice(0, contents(old).length)).toEqual(contents(old));
        const answer = finals.find((f) => f.causation === after[souls.indexOf(id)]);
        recovery.push((answer?.at ?? Number.NaN) - killedAt);
      }
      // Every perception, before and after the loss, answered exactly once.
      for (const id of [...sent, ...after]) expect(finals.filter((f) => f.causation === id)).toHaveLength(1);

      reportChaos("machine loss (3 nodes, placement: auto)", [
        { name: "souls", value: SOULS },
        { name: "node killed", value: `${victim} (ran ${victims.length})` },
        { name: "lease", value: LEASE_MS, unit: "ms" },
        { name: "perceptions answered once", value: sent.length + after.length },
        { name: "kill → moved soul answers, p50", value: percentile(recovery, 50), unit: "ms" },
        { name: "kill → moved soul answers, max", value: Math.max(...recovery), unit: "ms" },
      ]);
    },
    chaosTimeout({ short: 120_000, full: 300_000 }),
  );
});
