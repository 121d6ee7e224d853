/**
 * Failover (`runtime.failover`) with real `ensoul up` processes on a real nats-server: a node
 * whose machine is lost for good (SIGKILL, then its data directory deleted) comes back on a
 * fresh machine under the same name; its souls are rebuilt from their replicated histories,
 * with every committed turn and memory, and answer the next perception as if nothing had
 * happened. Perceptions sent while no node ran are answered once, none twice.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, decodeEnvelope, isKind, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { connectClusterBus, type SoulMemoryReply } from "../../../runtime/node/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { runEnsoul, spawnNode, type NodeProcess } from "../../support/cluster/cliProcess.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

describeWithNats("failover: a node's machine lost for good", () => {
  const dirs = tempDirs("ensoul-e2e-failover-");
  const cluster = uniqueCluster("fo");
  let server: NatsServerHandle;
  let configFile: string;
  let bus: Bus;
  let node: NodeProcess | undefined;
  const finals: Envelope<"speech">[] = [];

  const up = (data: string) => spawnNode([configFile, "--node", "a", "--nats", server.url, "--data", data]);
  const memory = async (soul: string) => JSON.parse((await runEnsoul(["memory", soul, "--json", "--nats", server.url, "--cluster", cluster])).stdout) as SoulMemoryReply;
  const answered = (id: string) => until(() => finals.some((f) => f.causation === id), 20_000, `an answer to ${id}; the node said:\n${node?.output()}`);

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const dir = dirs.make();
    configFile = join(dir, "cluster.yaml");
    writeFileSync(
      configFile,
      [
        `cluster: ${cluster}`,
        "nodes: [a]",
        "souls:",
        "  - { id: sam, blueprint: samantha }",
        "  - { id: tom, blueprint: samantha }",
        "runtime: { heartbeatMs: 250, ackWaitMs: 1500, failover: { leaseMs: 1500 } }",
        "",
      ].join("\n"),
    );
    bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
    await bus.durable(clusterSubjects(cluster).allSouls("says"), "e2e-watch", (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final) finals.push(d.envelope);
    });
  });
  afterAll(async () => {
    await node?.kill("SIGKILL");
    await bus?.close();
    await server?.dispose();
    dirs.cleanup();
  });

  it("comes back on a fresh data directory with every soul's memory, and answers what waited exactly once", async () => {
    const first = dirs.make();
    node = up(first);
    await node.waitFor(/ensoul up: ready/);
    const sent: string[] = [];
    for (const [soul, text] of [["sam", "Hi, I'm Ada."], ["tom", "Hello, my name is Bo."], ["sam", "I build boats."]] as const) {
      const env = await perceive(bus, soul, text, { name: soul === "sam" ? "Ada" : "Bo" });
      sent.push(env.id);
      await answered(env.id);
    }
    const before = { sam: await memory("sam"), tom: await memory("tom") };
    expect(before.sam.turns).toBe(2);

    // The machine is lost: the process killed, its disk gone.
    expect(await node.kill("SIGKILL")).not.toBe(0);
    rmSync(first, { recursive: true, force: true });
    // People keep talking meanwhile.
    const waiting = await perceive(bus, "sam", "Are you still there?", { name: "Ada" });

    const second = dirs.make();
    node = up(second);
    await node.waitFor(/ensoul up: ready/, 30_000);
    await answered(waiting.id);
    const after = await memory("sam");
    expect(after.turns).toBe(3);
    const contents = (m: SoulMemoryReply) => (m.workingMemory as { memories: { content: string }[] }).memories.map((x) => x.content);
    // Everything sam had, then the turn that waited.
    expect(contents(after).slice(0, contents(before.sam).length)).toEqual(contents(before.sam));
    expect(contents(after).join("\n")).toContain("Are you still there?");
    expect(await memory("tom")).toMatchObject({ turns: before.tom.turns, workingMemory: before.tom.workingMemory });
    expect(node.output()).toMatch(/soul sam rebuilt from its replicated history \(2 turns\)/);

    // Each perception answered once, across the loss.
    for (const id of [...sent, waiting.id]) expect(finals.filter((f) => f.causation === id)).toHaveLength(1);
  }, 90_000);
});
