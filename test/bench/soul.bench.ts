/**
 * The soul actor's own cost: a turn with a process that does nothing, many souls at once,
 * rehydration of a passivated soul, and what a soul keeps in memory. Run with
 * `node --expose-gc --import tsx test/bench/run.ts soul` for exact memory figures.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ActorStore } from "../../runtime/store/types.ts";
import { createMemoryActorStore } from "../../actors/soul/memoryActorStore.ts";
import { createSoul, createSoulHost, defineSoul, type MentalProcess, type Soul } from "../../actors/soul/index.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";
import { openBenchStore, type BenchStore } from "../support/soul/benchStore.ts";

const trivial: MentalProcess = async ({ workingMemory }) => workingMemory;
const blueprint = defineSoul({ name: "Bench", persona: "A soul that only listens.", initialProcess: trivial, processes: { trivial } });
const said = (i: number) => ({ action: "said", content: `message ${i}`, name: "Ada" });

async function turnLatencies(storeOf: (id: string) => ActorStore, souls: number, turnsPerSoul: number): Promise<number[]> {
  const samples: number[] = [];
  for (let s = 0; s < souls; s++) {
    const soul = createSoul({ blueprint, id: `lat-${s}`, store: storeOf(`lat-${s}`) });
    for (let t = 0; t < turnsPerSoul; t++) {
      const start = performance.now();
      await soul.perceive(said(t));
      await soul.idle();
      samples.push(performance.now() - start);
    }
    await soul.stop();
  }
  return samples;
}

/**
 * The store's own floor for the same work: receive a perception and commit a state that
 * grows the way the soul's does (one memory per turn), with no soul in between.
 */
async function storeFloor(store: BenchStore, actors: number, turnsPerActor: number): Promise<number[]> {
  const samples: number[] = [];
  for (let a = 0; a < actors; a++) {
    const actor = store.actor(`floor-${a}`);
    const memories: unknown[] = [{ id: randomUUID(), role: "system", content: blueprint.persona, region: "core", timestamp: Date.now() }];
    for (let t = 0; t < turnsPerActor; t++) {
      const start = performance.now();
      const perception = { id: `f${t}`, ts: Date.now(), ...said(t) };
      await actor.receive(perception.id, perception);
      memories.push({ id: randomUUID(), role: "user", content: `Ada said: "message ${t}"`, name: "Ada", timestamp: Date.now(), metadata: { perceptionId: perception.id } });
      await actor.commitTurn({
        inboxDone: perception.id,
        state: {
          workingMemory: { soulName: blueprint.name, memories, regionOrder: [] },
          soulMemory: {},
          processMemory: {},
          currentProcess: "trivial",
          invocationCounts: { trivial: t + 1 },
          turn: t + 1,
          snapshot: { status: "active", value: { trivial: "idle" }, context: {}, children: {}, historyValue: {} },
          metadata: {},
        },
      });
      samples.push(performance.now() - start);
    }
  }
  return samples;
}

async function throughput(store: BenchStore, souls: number, perSoul: number): Promise<number> {
  const all: Soul[] = [];
  for (let s = 0; s < souls; s++) all.push(createSoul({ blueprint, id: `tp-${s}`, store: store.actor(`tp-${s}`) }));
  const start = performance.now();
  await Promise.all(
    all.map(async (soul) => {
      for (let i = 0; i < perSoul; i++) await soul.perceive(said(i));
      await soul.idle();
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await Promise.all(all.map((soul) => soul.stop()));
  return (souls * perSoul) / seconds;
}

async function rehydration(store: BenchStore, souls: number): Promise<number[]> {
  const host = createSoulHost({ blueprint, store: (id) => store.actor(id) });
  for (let s = 0; s < souls; s++) await host.perceive(`rh-${s}`, said(0));
  for (const id of host.live()) await (await host.get(id)).idle();
  await host.passivateIdle(0);
  const samples: number[] = [];
  for (let s = 0; s < souls; s++) {
    const start = performance.now();
    await host.get(`rh-${s}`);
    samples.push(performance.now() - start);
  }
  await host.close();
  return samples;
}

/**
 * What a perception costs to queue behind a running turn, with `waiting` already queued:
 * constant (the queue is shared, not copied per arrival), so the 100,000th costs what the
 * first did. In-memory store, so the figure is the soul's own.
 */
async function queuedPerceive(waiting: number): Promise<number> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const hold: MentalProcess = async ({ workingMemory }) => {
    started();
    await gate;
    return workingMemory;
  };
  const holding = defineSoul({ name: "Holding", persona: "", initialProcess: hold, processes: { hold } });
  const soul = createSoul({ blueprint: holding, id: `queue-${waiting}`, store: createMemoryActorStore(`queue-${waiting}`), maxQueued: waiting + 1_000 });
  await soul.perceive(said(-1));
  await running;
  for (let i = 0; i < waiting; i++) await soul.perceive(said(i));
  const start = performance.now();
  for (let i = 0; i < 1_000; i++) await soul.perceive(said(waiting + i));
  const perPerception = (performance.now() - start) / 1_000;
  const stopped = soul.stop();
  release();
  await stopped;
  return perPerception * 1000;
}

const gc = (globalThis as { gc?: () => void }).gc;
function heapUsed(): number {
  if (gc) {
    gc();
    gc();
  }
  return process.memoryUsage().heapUsed;
}

/** Heap per soul while active and idle, and per soul once passivated (what the host still keeps). */
async function residentMemory(store: BenchStore, souls: number): Promise<{ active: number; passivated: number }> {
  const host = createSoulHost({ blueprint, store: (id) => store.actor(id) });
  const before = heapUsed();
  for (let s = 0; s < souls; s++) await host.perceive(`mem-${s}`, said(0));
  for (const id of host.live()) await (await host.get(id)).idle();
  const active = heapUsed();
  await host.passivateIdle(0);
  const passivated = heapUsed();
  await host.close();
  return { active: (active - before) / souls, passivated: Math.max(0, passivated - before) / souls };
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const memoryStores = new Map<string, ActorStore>();
  const memoryStoreOf = (id: string) => {
    let store = memoryStores.get(id);
    if (!store) memoryStores.set(id, (store = createMemoryActorStore(id)));
    return store;
  };
  await turnLatencies(memoryStoreOf, 2, 200);
  const inMemory = await turnLatencies(memoryStoreOf, 20, 100);
  const p50 = percentile(inMemory, 50);
  rows.push({ name: "turn overhead p50, in-memory store", value: p50, unit: "ms", target: "< 0.3 ms", met: p50 < 0.3 });
  rows.push({ name: "turn overhead p99, in-memory store", value: percentile(inMemory, 99), unit: "ms" });

  const few = await queuedPerceive(0);
  const many = await queuedPerceive(100_000);
  rows.push({ name: "perceive while a turn runs, queue empty (in-memory store)", value: few, unit: "µs" });
  rows.push({ name: "perceive while a turn runs, 100,000 already waiting (in-memory store)", value: many, unit: "µs", target: "about the same as with none", ratio: many / few });

  const dir = mkdtempSync(join(tmpdir(), "ensoul-soul-bench-"));
  const store = await openBenchStore(dir);
  try {
    await turnLatencies((id) => store.actor(`warm-${id}`), 2, 200);
    const lmdb = await turnLatencies((id) => store.actor(id), 20, 100);
    const lmdbP50 = percentile(lmdb, 50);
    const floorP50 = percentile(await storeFloor(store, 20, 100), 50);
    rows.push({ name: `store floor p50: receive + commitTurn, no soul (${store.kind})`, value: floorP50, unit: "ms" });
    rows.push({ name: `turn overhead p50, with the commit (${store.kind})`, value: lmdbP50, unit: "ms", target: "< 1 ms", met: lmdbP50 < 1, ratio: lmdbP50 / floorP50 });
    rows.push({ name: `turn overhead p99, with the commit (${store.kind})`, value: percentile(lmdb, 99), unit: "ms" });

    const rate = await throughput(store, 1000, 10);
    rows.push({ name: `turns/s, 1000 souls x 10 perceptions (${store.kind})`, value: rate, unit: "turns/s", target: ">= 5000 turns/s", met: rate >= 5000 });

    const rehydrate = await rehydration(store, 1000);
    const rehydrateP50 = percentile(rehydrate, 50);
    rows.push({ name: "rehydration p50 per passivated soul", value: rehydrateP50, unit: "ms", target: "< 1 ms", met: rehydrateP50 < 1 });

    const memory = await residentMemory(store, 1000);
    const how = gc ? "gc" : "no gc: rough";
    rows.push({ name: `heap per idle active soul (${how})`, value: memory.active / 1024, unit: "KB" });
    rows.push({
      name: `heap per passivated soul (${how})`,
      value: memory.passivated / 1024,
      unit: "KB",
      target: "< 50 KB",
      met: memory.passivated / 1024 < 50,
    });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }

  // The same turn and throughput on the crash-safe default store, as a node runs it.
  const safeDir = mkdtempSync(join(tmpdir(), "ensoul-soul-bench-safe-"));
  const safe = await openBenchStore(safeDir, "default");
  try {
    await turnLatencies((id) => safe.actor(`warm-${id}`), 2, 200);
    const safeP50 = percentile(await turnLatencies((id) => safe.actor(id), 20, 100), 50);
    rows.push({ name: `turn overhead p50, with the commit (${safe.kind})`, value: safeP50, unit: "ms", target: "< 1 ms", met: safeP50 < 1 });
    const safeRate = await throughput(safe, 1000, 10);
    rows.push({ name: `turns/s, 1000 souls x 10 perceptions (${safe.kind})`, value: safeRate, unit: "turns/s", target: ">= 5000 turns/s", met: safeRate >= 5000 });
  } finally {
    await safe.close();
    rmSync(safeDir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await run()) console.log(row);
}
