/**
 * 100, 1,000, 10,000 and 100,000 registered souls, 10% of them active: how turns/s, memory,
 * rehydration and a node's start change with the number of souls. Printed as a curve: one
 * row per measure per size.
 *
 * registered = in the cluster config, with committed state in the node's LMDB. That state is
 * made by one real turn per soul through a soul host (as the soul bench drives souls) for the
 * first 1,000 souls, and for the others by restoring the first soul's dump as theirs (what
 * its turn committed, in the store's own format); the "setup" row says how long it took.
 * Then two phases over the same LMDB:
 *
 * - the soul host alone (as soul.bench.ts): the active souls (every 10th) each get one turn
 *   to activate them (not measured), then TURNS more between them, all queued at once;
 *   rehydration = get + first turn committed for a soul passivated in LMDB, one at a time,
 *   against the same on a live soul (the ratio's floor).
 * - a node (`startNode`, in-process bus, the config of N souls): its start over the seeded
 *   LMDB (and the config parse before it, as `ensoul up` does both), heap after gc with no
 *   soul live (what being registered costs), the 10% activated by a perception each over the
 *   bus, heap and RSS after gc with them live, NODE_TURNS more turns over the bus, and
 *   rehydration as a bridge sees it: a perception to a passivated soul until its answer.
 *
 * The two turns/s rows differ on purpose: the in-process bus's durable consumer hands the
 * node one perception at a time (runtime/node/perceptionSources.ts), each awaiting its LMDB
 * inbox write, so a one-process node is bounded by its intake, not by the souls; the host
 * row is what the souls themselves sustain.
 *
 * Echo souls (no model call), LMDB noSync as the other benchmarks: the runtime's cost, not
 * the disk's. Each size runs in a child process of its own (this file, forked with
 * --expose-gc): RSS never goes back down inside a process, and a 100,000-soul run must not
 * inflate the figures of the next, nor be inflated by the one before.
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createSoulHost, type SoulHost } from "../../actors/soul/index.ts";
import { clusterSubjects, createInProcessBus, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Bus } from "../../runtime/bus/index.ts";
import { nodeDataDir, parseClusterConfig, startNode } from "../../runtime/node/index.ts";
import { openStore, type Store } from "../../runtime/store/index.ts";
import { echoSoul } from "../support/cluster/blueprints.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

/**
 * ENSOUL_SCALE_SIZES=100,1000 runs only those sizes (a quick look). The whole curve, 100,000
 * included, takes about two and a half minutes on a two-core machine: the node's registry and
 * the soul host's no longer copy every soul at each flush or activation, and a heartbeat lists
 * what fits in one message from cached entries (nodeStatusReply.ts).
 */
const SIZES = process.env.ENSOUL_SCALE_SIZES?.split(",").map(Number) ?? [100, 1_000, 10_000, 100_000];
/** Measured turns at every size, spread over the active souls (soul host). */
const TURNS = 20_000;
/** Measured turns over the node's bus: fewer, as its intake takes one perception at a time. */
const NODE_TURNS = 2_000;
const REHYDRATIONS = 200;
/**
 * Souls set up by a real turn; beyond, copies of such a soul (a real turn costs ~3 ms of a
 * shared machine: 100,000 of them would take minutes per size). Per setup host, so none stays live.
 */
const REAL_SETUP = 1_000;
const SETUP_BATCH = 1_000;
const CLUSTER = "scale";
/**
 * ENSOUL_SCALE_HEARTBEAT_MS: the node's runtime.heartbeatMs (default: the config's, 1 s). A
 * heartbeat re-encodes only the souls changed since the last one, and lists at most what fits
 * in one message; a long period shows what is left without it.
 */
const HEARTBEAT_MS = process.env.ENSOUL_SCALE_HEARTBEAT_MS ? Number(process.env.ENSOUL_SCALE_HEARTBEAT_MS) : undefined;
/** Progress on stderr, so a size that takes long shows where it is. */
const phase = (size: number, what: string) => process.stderr.write(`bench: scale: ${size.toLocaleString("en")} souls: ${what} (${new Date().toISOString().slice(11, 19)})\n`);

interface SizeResult {
  size: number;
  active: number;
  setupS: number;
  hostTurnsPerS: number;
  hostRehydrateP50: number;
  hostWarmP50: number;
  parseMs: number;
  startMs: number;
  heapRegisteredMB: number;
  heapActiveMB: number;
  rssActiveMB: number;
  nodeTurnsPerS: number;
  nodeRehydrateP50: number;
  nodeWarmP50: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
function memory(): NodeJS.MemoryUsage {
  gc?.();
  gc?.();
  return process.memoryUsage();
}
const mb = (bytes: number) => bytes / (1024 * 1024);
let said = 0;
const perception = () => ({ action: "said", content: `message ${said++}`, name: "ada" });
const timed = async (fn: () => Promise<unknown>) => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};
/** Samples spread over `ids`, one at a time, so each figure is one soul's. */
async function sequential(ids: readonly string[], count: number, once: (id: string) => Promise<number>): Promise<number[]> {
  const step = Math.max(1, Math.floor(ids.length / count));
  const samples: number[] = [];
  for (let i = 0; samples.length < count; i += step) samples.push(await once(ids[i % ids.length]));
  return samples;
}

async function setup(store: Store, ids: readonly string[]): Promise<void> {
  const real = ids.slice(0, REAL_SETUP);
  for (let i = 0; i < real.length; i += SETUP_BATCH) {
    const host = createSoulHost({ blueprint: echoSoul, store: (id) => store.actor(id) });
    const batch = real.slice(i, i + SETUP_BATCH);
    await Promise.all(batch.map((id) => host.perceive(id, perception())));
    for (const id of host.live()) await (await host.get(id)).idle();
    await host.close();
  }
  // The rest: the first soul's records after its real turn (state, turn log, key/values),
  // written as each other soul by the store's own restore, one transaction each.
  const dump = store.actor(ids[0]).dump();
  if (!dump) throw new Error("the setup turn committed nothing");
  const rest = ids.slice(REAL_SETUP);
  for (let i = 0; i < rest.length; i += SETUP_BATCH) await Promise.all(rest.slice(i, i + SETUP_BATCH).map((id) => store.actor(id).restore(dump)));
}

async function hostPhase(store: Store, active: readonly string[], idle: readonly string[]) {
  const host: SoulHost = createSoulHost({ blueprint: echoSoul, store: (id) => store.actor(id) });
  try {
    const turn = async (id: string) => {
      const soul = await host.get(id);
      await soul.perceive(perception());
      await soul.idle();
    };
    await Promise.all(active.map(turn)); // activation, not measured
    const perSoul = Math.ceil(TURNS / active.length);
    const ms = await timed(() =>
      Promise.all(
        active.map(async (id) => {
          const soul = await host.get(id);
          for (let t = 0; t < perSoul; t++) await soul.perceive(perception());
          await soul.idle();
        }),
      ),
    );
    const rehydrate = await sequential(idle, REHYDRATIONS, (id) => timed(() => turn(id)));
    const warm = await sequential(active, REHYDRATIONS, (id) => timed(() => turn(id)));
    return { hostTurnsPerS: (perSoul * active.length) / (ms / 1000), hostRehydrateP50: percentile(rehydrate, 50), hostWarmP50: percentile(warm, 50) };
  } finally {
    await host.close();
  }
}

/** A bridge on the node's bus: sends a perception, resolves with the time to its final speech (the waiter is set before the publish). */
function bridge(bus: Bus) {
  const s = clusterSubjects(CLUSTER);
  const waiting = new Map<string, (at: number) => void>();
  const sub = bus.subscribe(s.allSouls("says"), (m) => {
    const d = decodeEnvelope(m.data);
    if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && d.envelope.causation) waiting.get(d.envelope.causation)?.(performance.now());
  });
  return {
    async send(soul: string): Promise<number> {
      const env = makeEnvelope("perception", "bridge-bench", soul, perception());
      const start = performance.now();
      const answered = new Promise<number>((resolve) => waiting.set(env.id, (at) => (waiting.delete(env.id), resolve(at - start))));
      await bus.publish(s.perceive(soul), encodeEnvelope(env), { msgId: env.id });
      return answered;
    },
    stop: () => sub.unsubscribe(),
  };
}

async function nodePhase(size: number, data: string, ids: readonly string[], active: readonly string[], idle: readonly string[]) {
  const parseStart = performance.now();
  const config = parseClusterConfig({ cluster: CLUSTER, souls: ids.map((id) => ({ id, blueprint: echoSoul, streamChunks: false })), runtime: { passivateAfterMs: 0, ...(HEARTBEAT_MS ? { heartbeatMs: HEARTBEAT_MS } : {}) } });
  const parseMs = performance.now() - parseStart;
  // The in-process stream keeps every durable message up to streamMaxBytes (256 MiB by
  // default): capped here, or the bench's own traffic would count as the node's heap. Every
  // batch is answered before the next, so far less than the cap is ever unconsumed.
  const bus = createInProcessBus({ cluster: CLUSTER, streamMaxBytes: 8 * 1024 * 1024 });
  const startAt = performance.now();
  const node = await startNode({ config, bus, nodeId: "local", placement: "all", data, store: { noSync: true }, log: () => undefined });
  const startMs = performance.now() - startAt;
  const b = bridge(bus);
  try {
    const heapRegisteredMB = mb(memory().heapUsed);
    phase(size, `node started in ${startMs.toFixed(0)} ms; activating the 10% over the bus`);
    for (let i = 0; i < active.length; i += 1_000) await Promise.all(active.slice(i, i + 1_000).map(b.send));
    const m = memory();
    phase(size, "node turns");
    const batch = active.slice(0, Math.min(active.length, 500));
    const rounds = Math.ceil(NODE_TURNS / batch.length);
    const ms = await timed(async () => {
      for (let r = 0; r < rounds; r++) await Promise.all(batch.map(b.send));
    });
    const rehydrate = await sequential(idle, REHYDRATIONS, b.send);
    const warm = await sequential(active, REHYDRATIONS, b.send);
    return {
      parseMs,
      startMs,
      heapRegisteredMB,
      heapActiveMB: mb(m.heapUsed),
      rssActiveMB: mb(m.rss),
      nodeTurnsPerS: (rounds * batch.length) / (ms / 1000),
      nodeRehydrateP50: percentile(rehydrate, 50),
      nodeWarmP50: percentile(warm, 50),
    };
  } finally {
    b.stop();
    await node.stop();
    await bus.close();
  }
}

async function measure(size: number): Promise<SizeResult> {
  const data = mkdtempSync(join(tmpdir(), "ensoul-scale-bench-"));
  try {
    const ids = Array.from({ length: size }, (_, i) => `s${i}`);
    const active = ids.filter((_, i) => i % 10 === 0);
    const idle = ids.filter((_, i) => i % 10 !== 0);
    // The node's own LMDB environment, so that the node finds what the hosts committed.
    const store = openStore({ path: nodeDataDir(data, "local"), noSync: true });
    const setupStart = performance.now();
    let host;
    try {
      await setup(store, ids);
      const setupS = (performance.now() - setupStart) / 1000;
      phase(size, `set up in ${setupS.toFixed(1)} s; soul host phase`);
      host = { setupS, ...(await hostPhase(store, active, idle)) };
    } finally {
      await store.close();
    }
    // The host phase activated the active souls and some idle ones; the node has not: its
    // rehydration samples are other idle souls than the host's (offset by one).
    phase(size, "node phase");
    return { size, active: active.length, ...host, ...(await nodePhase(size, data, ids, active, idle.slice(1))) };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

/** One size in a child process of its own (see the file comment). */
function inChild(size: number): Promise<SizeResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ["--expose-gc", "--max-old-space-size=8192", "--import", "tsx"],
      env: { ...process.env, ENSOUL_SCALE_BENCH_SIZE: String(size) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let result: SizeResult | undefined;
    child.on("message", (m) => (result = m as SizeResult));
    child.on("error", reject);
    child.on("exit", (code) => (result ? resolve(result) : reject(new Error(`scale bench at ${size} souls exited with ${code}`))));
  });
}

export async function run(): Promise<BenchRow[]> {
  const results: SizeResult[] = [];
  for (const size of SIZES) {
    process.stderr.write(`bench: scale: ${size.toLocaleString("en")} souls…\n`);
    results.push(await inChild(size));
  }
  const at = (r: SizeResult) => `${r.size.toLocaleString("en")} souls (${r.active.toLocaleString("en")} active)`;
  const first = results[0];
  const curve = (name: string, unit: string, value: (r: SizeResult) => number, extra: (r: SizeResult) => Partial<BenchRow> = () => ({})) =>
    results.map((r) => ({ name: `${name}, ${at(r)}`, value: value(r), unit, ...extra(r) }));
  // Ratios: against the smallest size (what growing costs), or for rehydration against a turn on a live soul.
  const grows = (value: (r: SizeResult) => number) => (r: SizeResult) => ({ ratio: value(r) / value(first) });
  return [
    ...curve("setup: real turns for 1,000 souls, restored copies beyond", "s", (r) => r.setupS),
    ...curve(`soul host turns/s, ${TURNS.toLocaleString("en")} turns over the active`, "turns/s", (r) => r.hostTurnsPerS, grows((r) => r.hostTurnsPerS)),
    ...curve("soul host rehydration p50 (get + first turn; ratio: to a live soul's turn)", "ms", (r) => r.hostRehydrateP50, (r) => ({ ratio: r.hostRehydrateP50 / r.hostWarmP50 })),
    ...curve("config parse", "ms", (r) => r.parseMs, grows((r) => r.parseMs)),
    ...curve("node start over the seeded LMDB", "ms", (r) => r.startMs, grows((r) => r.startMs)),
    ...curve("node heap used after gc, none live", "MB", (r) => r.heapRegisteredMB),
    ...curve("node heap used after gc, 10% live", "MB", (r) => r.heapActiveMB),
    ...curve("node RSS after gc, 10% live", "MB", (r) => r.rssActiveMB),
    ...curve(`node turns/s over the in-process bus, ${NODE_TURNS.toLocaleString("en")} turns`, "turns/s", (r) => r.nodeTurnsPerS, grows((r) => r.nodeTurnsPerS)),
    ...curve("node rehydration p50 (perception to answer; ratio: to a live soul's)", "ms", (r) => r.nodeRehydrateP50, (r) => ({ ratio: r.nodeRehydrateP50 / r.nodeWarmP50 })),
  ];
}

const childSize = process.env.ENSOUL_SCALE_BENCH_SIZE;
if (childSize && process.send) {
  const result = await measure(Number(childSize));
  process.stderr.write(`bench: scale: result ${JSON.stringify(result)}\n`);
  process.send(result, () => process.exit(0));
}
