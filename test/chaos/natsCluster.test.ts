/**
 * Chaos, scenario 3: NATS itself fails. Three nats-servers on loopback form a cluster with
 * JetStream; the cluster stream and the shared-context bucket are kept on all three
 * (`runtime.replicas: 3`). Two `ensoul up` nodes, given all three URLs, answer a steady stream
 * of perceptions while the stream's leader is SIGKILLed and started again, and later the whole
 * NATS cluster is restarted. Nothing may be lost or answered twice, and the nodes must come
 * through on their own: same processes, reconnected by themselves.
 *
 * The stream is first created with one replica by a client that sets none (as a CLI command
 * would); the first node to start brings it to three, as its config asks.
 *
 * Full (`ENSOUL_CHAOS=full`): 40 souls, 25 perceptions/s for about 2.5 minutes (some 3,500), a
 * 10 s single-server outage. Short (inside `npm test`): 10 souls, 20/s for some 15 s, a 1.5 s outage.
 */
import { join } from "node:path";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, openSharedContext, streamName, type Bus } from "../../runtime/bus/index.ts";
import { connectClusterBus, parseClusterConfig } from "../../runtime/node/index.ts";
import { pause, until } from "../support/cluster/busWatch.ts";
import type { NodeProcess } from "../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../support/cluster/clusterKit.ts";
import { reportChaos } from "../support/chaos/chaosReport.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { AnswerLedger, bySoul, fleetSoulId, seeded, soulMemory, spawnFleetNode, SteadyPublisher } from "../support/chaos/fleet.ts";
import { startNatsCluster, type NatsClusterHandle } from "../support/chaos/natsCluster.ts";
import { describeWithNats } from "../support/nats/describeWithNats.ts";
import { startNatsServer } from "../support/nats/natsServer.ts";
import { tempDirs } from "../support/tempDirs.ts";

/**
 * Perceptions go out at `rate` from the start until `tailMs` after the second fault is over:
 * `warmupMs` before the crash, `betweenMs` of steady work between the two faults.
 */
const size = chaosSize({
  short: { souls: 10, rate: 20, warmupMs: 2_000, outageMs: 1_500, betweenMs: 2_000, tailMs: 2_000 },
  full: { souls: 40, rate: 25, warmupMs: 20_000, outageMs: 10_000, betweenMs: 30_000, tailMs: 30_000 },
});
const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const NODES = ["a", "b"];

describeWithNats("chaos: a three-server NATS cluster with R3 streams loses a server, then restarts whole", () => {
  const dirs = tempDirs("ensoul-chaos-nats-");
  const cluster = uniqueCluster("chaos-nats");
  const stream = streamName(cluster);
  let nats: NatsClusterHandle;
  let bus: Bus;
  let admin: NatsConnection;
  let jsm: JetStreamManager;
  const nodes = new Map<string, NodeProcess>();
  let replicasBefore = 0;

  beforeAll(async () => {
    nats = await startNatsCluster({ size: 3 });
    admin = await connect({ servers: nats.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    jsm = await jetstreamManager(admin);
    // A client with no replica setting creates the stream first, with one replica.
    bus = await connectClusterBus({ servers: nats.urls, cluster, reconnectTimeWaitMs: 100, publishTimeoutMs: 180_000 });
    replicasBefore = (await jsm.streams.info(stream)).config.num_replicas;
    const data = join(dirs.make(), "data");
    for (const node of NODES) nodes.set(node, spawnFleetNode({ cluster, souls: size.souls, node, nodes: NODES, nats: nats.urls, data, replicas: 3 }));
    await Promise.all([...nodes.values()].map((n) => n.waitFor(/ensoul up: ready/, 60_000)));
  }, 120_000);

  afterAll(async () => {
    try {
      await bus?.close();
      await admin?.close();
      await Promise.all([...nodes.values()].map((n) => n.kill("SIGKILL")));
    } finally {
      await nats?.dispose();
      dirs.cleanup();
    }
  }, 30_000);

  it("runtime.replicas is 1 unless set, and 1..5", () => {
    const souls = [{ id: "s", blueprint: "samantha" }];
    expect(parseClusterConfig({ souls }).runtime.replicas).toBe(1);
    expect(parseClusterConfig({ souls, runtime: { replicas: 3 } }).runtime.replicas).toBe(3);
    expect(() => parseClusterConfig({ souls, runtime: { replicas: 0 } }, "c.yaml")).toThrow(/^c\.yaml: runtime\.replicas: /);
    expect(() => parseClusterConfig({ souls, runtime: { replicas: 6 } }, "c.yaml")).toThrow(/^c\.yaml: runtime\.replicas: /);
  });

  it("a replica count a lone server cannot give is reported with the stream and both counts", async () => {
    const lone = await startNatsServer({ jetstream: true });
    try {
      // nats-server 2.9 outside a cluster takes `num_replicas: 3` (on create and on update) and keeps one copy:
      // the bus says so instead, whether the stream exists or not.
      const refusal = (name: string) => new RegExp(`cannot serve cluster '${name}': runtime\\.replicas is 3, but the NATS server at ${lone.url} is not part of a cluster and keeps one copy of a stream: set runtime\\.replicas to 1`);
      const attempt = (name: string) =>
        connectClusterBus({ servers: lone.url, cluster: name, replicas: 3 }).then(
          async (b) => (await b.close(), null),
          (err: Error) => err,
        );
      const existing = uniqueCluster("chaos-lone");
      await (await connectClusterBus({ servers: lone.url, cluster: existing })).close();
      expect((await attempt(existing))?.message).toMatch(refusal(existing));
      const fresh = uniqueCluster("chaos-lone");
      expect((await attempt(fresh))?.message).toMatch(refusal(fresh));
    } finally {
      await lone.dispose();
    }
  });

  it("the nodes brought the cluster stream to three replicas", async () => {
    expect(replicasBefore).toBe(1);
    const info = await jsm.streams.info(stream);
    expect(info.config.num_replicas).toBe(3);
  });

  it(
    `answers every perception exactly once through a server's crash and a whole-cluster restart (seed ${seed})`,
    async () => {
      // The shared-context bucket, replicated as the stream: a value written before the faults is there after.
      const kvBus = await connectClusterBus({ servers: nats.urls, cluster, reconnectTimeWaitMs: 100, replicas: 3 });
      const kv = kvBus.sharedKv?.();
      if (!kv) throw new Error("the NATS bus has no shared-context bucket");
      const shared = openSharedContext(kv, "chaos");
      await shared.set("written-before", { seed });
      const kvInfo = await jsm.streams.info(`KV_${kv.bucket}`);
      expect(kvInfo.config.num_replicas).toBe(3);

      const ledger = await AnswerLedger.watch(bus, "chaos-nats-watch");
      // Speech as published (core NATS, no stream): when the nodes spoke, apart from when a bridge's consumer saw it.
      const published: number[] = [];
      const core = bus.subscribe(clusterSubjects(cluster).allSouls("says"), () => void published.push(Date.now()));
      /** A wait that failed, with what the stream, its consumers and the nodes say. */
      const explained = async (wait: Promise<void>) => {
        try {
          await wait;
        } catch (err) {
          const lines = [(err as Error).message, `sent ${publisher.sent.length}, answered ${ledger.byCausation.size}, speech published ${published.length}`];
          try {
            const info = await jsm.streams.info(stream);
            lines.push(`stream: ${info.state.messages} messages, last seq ${info.state.last_seq}, leader ${info.cluster?.leader}, replicas ${JSON.stringify(info.cluster?.replicas?.map((r) => [r.name, r.current, r.lag]))}`);
            for await (const c of jsm.consumers.list(stream)) {
              lines.push(`consumer ${c.name}: leader ${c.cluster?.leader}, pending ${c.num_pending}, ack pending ${c.num_ack_pending}, delivered ${c.delivered.stream_seq}, ack floor ${c.ack_floor.stream_seq}, waiting ${c.num_waiting}`);
            }
          } catch (e) {
            lines.push(`stream info: ${String(e)}`);
          }
          for (const [name, node] of nodes) lines.push(`node ${name} (exit ${node.child.exitCode}):\n${node.output().slice(-2_000)}`);
          throw new Error(lines.join("\n"));
        }
      };
      const random = seeded(seed);
      const publisher = new SteadyPublisher({ bus, total: Number.POSITIVE_INFINITY, ratePerSecond: size.rate, soulCount: size.souls, random, ledger }).start();
      const pids = new Map([...nodes].map(([n, p]) => [n, p.pid]));

      // Fault 1: the stream's leader SIGKILLed, back after the outage.
      await pause(size.warmupMs);
      const leaderName = (await jsm.streams.info(stream)).cluster?.leader ?? "";
      const leader = nats.byName(leaderName) ?? nats.servers[0];
      const answeredBeforeKill = ledger.answers;
      const killedAt = Date.now();
      await leader.kill();
      await pause(size.outageMs);
      await leader.restart();
      const serverBackAt = Date.now();
      const answeredDuringOutage = ledger.answers - answeredBeforeKill;
      await explained(until(() => ledger.firstAfter(killedAt) !== undefined, 60_000, "an answer after the server's crash"));
      const firstAfterKill = (ledger.firstAfter(killedAt) as number) - killedAt;
      const spokeAfterKill = (published.find((t) => t > killedAt) ?? Number.NaN) - killedAt;

      // Fault 2: every server stopped, then all started again (same ports, same stores).
      await pause(size.betweenMs);
      const restartAt = Date.now();
      await nats.restartAll();
      const clusterBackAt = Date.now();
      await explained(until(() => ledger.firstAfter(clusterBackAt) !== undefined, 90_000, "an answer after the whole cluster's restart"));
      const firstAfterRestart = (ledger.firstAfter(clusterBackAt) as number) - clusterBackAt;
      const spokeAfterRestart = (published.find((t) => t > clusterBackAt) ?? Number.NaN) - clusterBackAt;

      await pause(size.tailMs);
      publisher.stop();
      await publisher.done;
      const sentAll = publisher.sent;
      await until(() => sentAll.every((s) => ledger.answered(s.id)), chaosSize({ short: 60_000, full: 180_000 }), `answers to all ${sentAll.length} perceptions`).catch(() => undefined);
      const lastAnswer = Math.max(...ledger.arrivals);
      await pause(2_000); // room for anything answered twice to show up
      const audit = ledger.audit(sentAll);

      const expected = bySoul(sentAll);
      const wrongTurns: string[] = [];
      for (let i = 0; i < size.souls; i++) {
        const soul = fleetSoulId(i);
        const memory = await soulMemory(bus, NODES[i % NODES.length], soul);
        const ids = expected.get(soul) ?? [];
        if (memory.turns !== ids.length || memory.inbox.pending + memory.inbox.failed > 0) wrongTurns.push(`${soul}: turns ${memory.turns} of ${ids.length}, inbox ${JSON.stringify(memory.inbox)}`);
      }
      const kept = await shared.get("written-before");
      const elapsed = (lastAnswer - publisher.startedAt) / 1000;
      reportChaos(`NATS cluster (seed ${seed})`, [
        { name: "souls / nodes / servers", value: `${size.souls} / ${NODES.length} / ${nats.servers.length}` },
        { name: "stream replicas", value: `${replicasBefore} -> ${(await jsm.streams.info(stream)).config.num_replicas}` },
        { name: "perceptions sent", value: sentAll.length },
        { name: "answered", value: sentAll.length - audit.missing.length },
        { name: "missing", value: audit.missing.length },
        { name: "duplicates", value: audit.duplicates.length },
        { name: "wrong answers", value: audit.wrong.length + audit.strays.length },
        { name: "server killed", value: `${leader.name === leaderName ? "stream leader " : ""}${leader.name.replace(/^chaos-[^-]+-[^-]+-/, "")}` },
        { name: "server outage", value: serverBackAt - killedAt, unit: "ms (SIGKILL to accepting again)" },
        { name: "answered during it", value: answeredDuringOutage },
        { name: "first answer after crash", value: firstAfterKill, unit: "ms after the SIGKILL" },
        { name: "first speech published", value: spokeAfterKill, unit: "ms after the SIGKILL (core NATS)" },
        { name: "cluster outage", value: clusterBackAt - restartAt, unit: "ms (stop of all to JetStream answering)" },
        { name: "first answer after it", value: firstAfterRestart, unit: "ms after JetStream answered" },
        { name: "first speech published", value: spokeAfterRestart, unit: "ms after JetStream answered (core NATS)" },
        { name: "speech seen on core NATS", value: `${published.length} (${published.filter((t) => t < killedAt).length} before the crash)` },
        { name: "throughput", value: sentAll.length / elapsed, unit: `answers/s (${elapsed.toFixed(1)} s)` },
      ]);
      expect(audit.missing.map((m) => m.id)).toEqual([]);
      expect(audit.duplicates).toEqual([]);
      expect(audit.wrong).toEqual([]);
      expect(audit.strays).toEqual([]);
      expect(wrongTurns).toEqual([]);
      expect(kept).toEqual({ seed });
      // The nodes came through by themselves: the same processes, still running, started once.
      for (const [name, node] of nodes) {
        expect(node.pid).toBe(pids.get(name));
        expect(node.child.exitCode).toBeNull();
        expect(node.output().match(/ensoul up: ready/g)).toHaveLength(1);
      }
      core.unsubscribe();
      await kvBus.close();
    },
    chaosTimeout({ short: 150_000, full: 600_000 }),
  );
});
