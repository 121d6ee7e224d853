/**
 * The cluster over NATS, with a trivial soul that speaks back (no model call: zero latency):
 *
 * - round trip, bridge → soul → bridge: a bridge publishes a perception on the soul's
 *   perceive subject (a JetStream publish) and waits for the final speech on its says
 *   subject. In between: the node's consumer, envelope validation, the soul's turn and its
 *   atomic commit (which records the perception in the inbox; the ack follows it), the
 *   speech's JetStream publish.
 *   Sequential, one in flight. The floor is a raw NATS request/reply (official client, no
 *   envelope, no stream, no disk) measured in the same run.
 * - the transport alone: the same bridge and the same two stream subjects, with the node
 *   replaced by a bare subscriber that decodes each perception and publishes its speech at
 *   once (no consumer, no soul, no LMDB). What is left between this row and the round trip
 *   is the runtime's own cost; what is between this row and the raw floor is the envelopes,
 *   the two JetStream publishes and their acks, and two processes sharing the cores.
 * - throughput: 1,000 souls on one node, 10 perceptions each published at once; turns
 *   committed (and answered) per second.
 *
 * The bridge runs in a worker thread (test/support/cluster/benchBridge.ts): its own event
 * loop, as a bridge process would have; the node, nats-server and the bridge still share
 * the machine's cores. LMDB without fsync, as the other benchmarks: they measure the
 * runtime, not the disk. One more row gives the round trip on the crash-safe default store,
 * whose commit waits for the disk's sync of the one before (see runtime/store).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterSubjects, connectNatsBus, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope } from "../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../runtime/node/index.ts";
import { echoSoul } from "../support/cluster/blueprints.ts";
import { INSTALL_HINT, natsAvailable, startNatsServer, type NatsServerHandle } from "../support/nats/natsServer.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";
import { rawRequestFloor } from "./natsFloor.ts";
import { inBridge } from "../support/bench/bridgeWorker.ts";

const WARMUP = 200;
const SAMPLES = 2_000;
const SOULS = 1_000;
const PER_SOUL = 10;

/** The round trip with no node: a core subscriber answers each perception with its speech, published as the node's outlet does. */
async function transportOnly(server: NatsServerHandle): Promise<number[]> {
  const cluster = `bench${Math.random().toString(36).slice(2, 8)}`;
  const bus = await connectNatsBus({ servers: server.url, cluster, name: "bench-bare-echo" });
  try {
    const subjects = clusterSubjects(cluster);
    const sub = bus.subscribe(subjects.perceive("bare"), (m) => {
      const d = decodeEnvelope(m.data);
      if (!d.ok || !isKind(d.envelope, "perception")) return;
      const p = d.envelope;
      const id = `${p.id}:1`;
      const speech = makeEnvelope("speech", "bare", p.from, { proposalId: id, text: `echo: ${p.body.content}`, final: true, seq: 1 }, { id, causation: p.id });
      void bus.publish(subjects.says("bare"), encodeEnvelope(speech), { msgId: id });
    });
    const { samples } = await inBridge<{ samples: number[] }>({ kind: "roundtrip", url: server.url, cluster, soul: "bare", warmup: WARMUP, samples: SAMPLES });
    sub.unsubscribe();
    return samples;
  } finally {
    await bus.drain();
  }
}


async function withNode<T>(server: NatsServerHandle, souls: string[], fn: (node: EnsoulNode) => Promise<T>, store: { noSync?: boolean } = { noSync: true }): Promise<T> {
  const cluster = `bench${Math.random().toString(36).slice(2, 8)}`;
  const data = mkdtempSync(join(tmpdir(), "ensoul-cluster-bench-"));
  const config = parseClusterConfig({ cluster, souls: souls.map((id) => ({ id, blueprint: echoSoul })), runtime: { passivateAfterMs: 0, maxInFlight: 512 } });
  const node = await startNode({ config, nats: { servers: server.url }, nodeId: "bench", data, store, log: () => undefined });
  try {
    return await fn(node);
  } finally {
    await node.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchRow[]> {
  if (!natsAvailable()) return [{ name: `skipped: nats-server not found; ${INSTALL_HINT}`, value: Number.NaN, unit: "" }];
  const server = await startNatsServer({ jetstream: true });
  try {
    const perception = encodeEnvelope(makeEnvelope("perception", "bridge-bench", "rt", { action: "said", content: "how was the river today?", name: "ada" }));
    const raw = await rawRequestFloor(server.url, perception, { warmup: WARMUP, samples: SAMPLES });
    const bare = await transportOnly(server);
    const { samples: trips } = await withNode(server, ["rt"], (node) =>
      inBridge<{ samples: number[] }>({ kind: "roundtrip", url: server.url, cluster: node.cluster, soul: "rt", warmup: WARMUP, samples: SAMPLES }),
    );
    const { samples: durableTrips } = await withNode(
      server,
      ["rt"],
      (node) => inBridge<{ samples: number[] }>({ kind: "roundtrip", url: server.url, cluster: node.cluster, soul: "rt", warmup: WARMUP, samples: SAMPLES / 2 }),
      {},
    );
    const souls = Array.from({ length: SOULS }, (_, i) => `soul-${i}`);
    // The first round (one perception each) activates every soul; the second is measured.
    const { turnsPerSecond } = await withNode(server, souls, (node) =>
      inBridge<{ turnsPerSecond: number[] }>({ kind: "throughput", url: server.url, cluster: node.cluster, souls, perSoul: PER_SOUL, rounds: 2 }),
    );
    const tp = { turnsPerSecond: turnsPerSecond[1] };
    const rawP50 = percentile(raw, 50);
    const rawP99 = percentile(raw, 99);
    const p50 = percentile(trips, 50);
    const p99 = percentile(trips, 99);
    return [
      { name: "raw NATS request/reply p50 (floor)", value: rawP50, unit: "ms" },
      { name: "raw NATS request/reply p99 (floor)", value: rawP99, unit: "ms" },
      { name: "the transport alone (bare echo, no node) p50", value: percentile(bare, 50), unit: "ms", ratio: percentile(bare, 50) / rawP50 },
      { name: "bridge→soul→bridge round trip over NATS p50", value: p50, unit: "ms", ratio: p50 / rawP50, target: "≤ 3x raw", met: p50 / rawP50 <= 3 },
      { name: "bridge→soul→bridge round trip over NATS p99", value: p99, unit: "ms", ratio: p99 / rawP99 },
      // Issue 16's measure: the same trip against the bare echo on the same JetStream subjects (the soul's own cost).
      { name: "round trip p50 ÷ bare echo p50 (the soul's turn on top of the transport)", value: p50 / percentile(bare, 50), unit: "x", target: "≤ 1.5x", met: p50 / percentile(bare, 50) <= 1.5 },
      { name: "the same, crash-safe default store (fsync), p50", value: percentile(durableTrips, 50), unit: "ms", ratio: percentile(durableTrips, 50) / rawP50 },
      { name: `throughput, ${SOULS} souls on one node, ${SOULS * PER_SOUL} turns`, value: tp.turnsPerSecond, unit: "turns/s", target: "≥ 3,000 turns/s", met: tp.turnsPerSecond >= 3_000 },
    ];
  } finally {
    await server.dispose();
  }
}
