/**
 * The store's cost per turn against its floor. The floor is a raw lmdb-js `put` of the same
 * ActorState, awaited, in an environment opened with the store's own options (plus the
 * fsync wait under `durability: "flush"`); `commitTurn` adds the inbox entry marked done, an
 * outbox entry and the nested transaction that makes them atomic. Floor and store samples
 * alternate in one loop, so both see the same disk and CPU conditions and the ratio is fair.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { open } from "lmdb";
import { lmdbOptions } from "../../runtime/store/environment.ts";
import { openStore, type StoreOptions } from "../../runtime/store/index.ts";
import { sampleOutbox, sampleState } from "../support/store/fixtures.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

const WARMUP = 300;
const SAMPLES = 2000;
const TURN_TARGET_MS = 1;

async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

async function measure(label: string, options: StoreOptions, samples = SAMPLES): Promise<BenchRow[]> {
  const rawDir = mkdtempSync(join(tmpdir(), "ensoul-bench-raw-"));
  const storeDir = mkdtempSync(join(tmpdir(), "ensoul-bench-store-"));
  const root = open(lmdbOptions({ ...options, path: rawDir }));
  const raw = root.openDB({ name: "state" });
  const store = openStore({ ...options, path: storeDir });
  const actor = store.actor("bench");
  const flush = options.durability === "flush";
  const state = sampleState(1);
  const puts: number[] = [];
  const receives: number[] = [];
  const commits: number[] = [];
  try {
    for (let i = 0; i < WARMUP + samples; i++) {
      const keep = i >= WARMUP;
      const put = await timed(async () => {
        await raw.put(["bench"], { ...state, turn: i });
        if (flush) await root.flushed;
      });
      const id = `p-${i}`;
      const receive = await timed(() => actor.receive(id, { action: "said", content: "hello there", name: "Ada" }));
      const commit = await timed(() => actor.commitTurn({ state: { ...state, turn: i }, inboxDone: id, outbox: [sampleOutbox(i)] }));
      if (keep) {
        puts.push(put);
        receives.push(receive);
        commits.push(commit);
      }
    }
    const loads: number[] = [];
    for (let i = 0; i < samples; i++) {
      const start = performance.now();
      actor.loadState();
      loads.push(performance.now() - start);
    }
    const floor = percentile(puts, 50);
    const commit = percentile(commits, 50);
    const receive = percentile(receives, 50);
    return [
      { name: `lmdb put p50, awaited (${label}) [floor]`, value: floor, unit: "ms" },
      { name: `commitTurn p50, 20-message state (${label})`, value: commit, unit: "ms", target: `< ${TURN_TARGET_MS} ms`, met: commit < TURN_TARGET_MS, ratio: commit / floor },
      { name: `commitTurn p99 (${label})`, value: percentile(commits, 99), unit: "ms" },
      { name: `receive p50 (${label})`, value: receive, unit: "ms", ratio: receive / floor },
      { name: `loadState p50 (${label})`, value: percentile(loads, 50) * 1000, unit: "µs" },
    ];
  } finally {
    await store.close();
    await root.close();
    rmSync(rawDir, { recursive: true, force: true });
    rmSync(storeDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchRow[]> {
  // Discarded: the first environment of a process pays for JIT and cold files, whichever mode it is.
  await measure("warm-up", {}, 500);
  return [
    // The default: resolves on commit (survives SIGKILL), fsync overlapped right after.
    ...(await measure("default", {})),
    // Resolves after the fsync too (survives power loss).
    ...(await measure("durability: flush", { durability: "flush" })),
    // No fsync at all: tests and benchmarks only.
    ...(await measure("noSync", { noSync: true })),
  ];
}
