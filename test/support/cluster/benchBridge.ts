/**
 * The bridge side of the cluster benchmark, run in a worker thread so that it does not share
 * the node's event loop (a real bridge is another process): it publishes perceptions as a
 * bridge would and listens for the souls' final speech.
 *
 * Messages in: { kind: "roundtrip", url, cluster, soul, warmup, samples }
 *            | { kind: "throughput", url, cluster, souls, perSoul, rounds }
 * Message out: { samples: number[] } | { turnsPerSecond: number[] } | { error: string }
 */
import { parentPort, workerData } from "node:worker_threads";
import { clusterSubjects, connectNatsBus, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Bus } from "../../../runtime/bus/index.ts";

export type BridgeJob =
  | { kind: "roundtrip"; url: string; cluster: string; soul: string; warmup: number; samples: number }
  | { kind: "throughput"; url: string; cluster: string; souls: string[]; perSoul: number; rounds: number };

async function roundTrips(bus: Bus, job: Extract<BridgeJob, { kind: "roundtrip" }>): Promise<number[]> {
  const s = clusterSubjects(bus.cluster);
  let waiting: { id: string; done: () => void } | null = null;
  const sub = bus.subscribe(s.says(job.soul), (m) => {
    const d = decodeEnvelope(m.data);
    if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && waiting && d.envelope.causation === waiting.id) waiting.done();
  });
  const samples: number[] = [];
  for (let i = 0; i < job.warmup + job.samples; i++) {
    const env = makeEnvelope("perception", "bridge-bench", job.soul, { action: "said", content: `how was the river today? ${i}`, name: "ada" });
    const bytes = encodeEnvelope(env);
    const answered = new Promise<void>((resolve) => (waiting = { id: env.id, done: resolve }));
    const t0 = process.hrtime.bigint();
    await Promise.all([bus.publish(s.perceive(job.soul), bytes, { msgId: env.id }), answered]);
    if (i >= job.warmup) samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  sub.unsubscribe();
  return samples;
}

/** Every soul gets `perSoul` perceptions, all published at once; turns answered per second. */
async function throughput(bus: Bus, souls: string[], perSoul: number): Promise<number> {
  const s = clusterSubjects(bus.cluster);
  const total = souls.length * perSoul;
  let answered = 0;
  let allAnswered!: () => void;
  const done = new Promise<void>((resolve) => (allAnswered = resolve));
  const sub = bus.subscribe(s.allSouls("says"), (m) => {
    const d = decodeEnvelope(m.data);
    if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && ++answered === total) allAnswered();
  });
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < perSoul; i++) {
    for (const soul of souls) {
      const env = makeEnvelope("perception", "bridge-bench", soul, { action: "said", content: `message ${i}`, name: "ada" });
      const p: Promise<void> = bus.publish(s.perceive(soul), encodeEnvelope(env), { msgId: env.id }).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= 1_024) await Promise.race(inFlight);
    }
  }
  await Promise.all(inFlight);
  await done;
  const seconds = (performance.now() - start) / 1000;
  sub.unsubscribe();
  return total / seconds;
}

async function main(job: BridgeJob): Promise<unknown> {
  const bus = await connectNatsBus({ servers: job.url, cluster: job.cluster, name: "bridge-bench" });
  try {
    if (job.kind === "roundtrip") return { samples: await roundTrips(bus, job) };
    const rates: number[] = [];
    for (let r = 0; r < job.rounds; r++) rates.push(await throughput(bus, job.souls, r === 0 ? 1 : job.perSoul));
    return { turnsPerSecond: rates };
  } finally {
    await bus.drain();
  }
}

if (parentPort) {
  main(workerData as BridgeJob).then(
    (result) => parentPort?.postMessage(result),
    (err: unknown) => parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) }),
  );
}
