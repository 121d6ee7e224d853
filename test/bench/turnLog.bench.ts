/**
 * What the turn log costs (runtime.turnLog, the debugger's timeline and revert): commitTurn
 * p50 with the log and without it, samples alternating in one loop so both see the same disk,
 * and the bytes each kept turn takes in LMDB (its entry, its compressed trace, and the
 * memories kept for it that the soul itself had already dropped).
 *
 * The turn is a soul that keeps a window of 200 memories (as Claudius does): each turn adds a
 * user message and an answer and drops the oldest two; its trace has one step whose prompt
 * is the whole window, as the soul runtime records it (TurnTrace).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Database } from "lmdb";
import { TurnTrace } from "../../actors/soul/TurnTrace.ts";
import type { Perception } from "../../actors/vocabulary/index.ts";
import { toPromptMessage, type Memory } from "../../runtime/cognition/index.ts";
import { openStore, type ActorState } from "../../runtime/store/index.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

const WINDOW = 200;
const WARMUP = 200;
const TURNS = 1500;
const KEEP = 100;

const sentence = (i: number) => `Message ${i}: the user talks about their week, the deadline on Friday and the trip they keep postponing.`;

function stateAt(turn: number, memories: readonly unknown[]): ActorState {
  return {
    workingMemory: { soulName: "Claudius", memories: [...memories], regionOrder: ["core", "default"] },
    soulMemory: { mood: "curious", turn },
    processMemory: { talking: [turn] },
    currentProcess: "talking",
    invocationCounts: { talking: turn },
    turn,
    snapshot: { status: "active", value: { talking: "idle" }, context: {} },
  };
}

function traceOf(turn: number, before: readonly unknown[], after: readonly unknown[]): unknown {
  const perception = { id: `p-${turn}`, action: "said", content: sentence(turn), name: "Ada", ts: turn } as Perception;
  const trace = new TurnTrace(before, perception, "talking", 0);
  const stepMemories = after.slice(0, -1);
  trace.step({
    step: "externalDialog",
    model: "anthropic:claude",
    memories: stepMemories,
    messages: [...stepMemories.map((m) => toPromptMessage(m as Memory)), { role: "system", content: "Answer as Claudius, briefly and kindly." }],
    raw: sentence(turn + 1),
    value: sentence(turn + 1),
    usage: { inputTokens: 4000, outputTokens: 40 },
    latencyMs: 800,
  });
  trace.path.push("talking");
  return trace.toStored(5);
}

function dbBytes(db: Database): number {
  const s = db.getStats() as { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; pageSize: number };
  return (s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages) * s.pageSize;
}

export async function run(): Promise<BenchRow[]> {
  const dirs = [mkdtempSync(join(tmpdir(), "ensoul-bench-log-")), mkdtempSync(join(tmpdir(), "ensoul-bench-nolog-"))];
  const logged = openStore({ path: dirs[0], turnLog: { keep: KEEP } });
  const plain = openStore({ path: dirs[1], turnLog: false });
  const a = logged.actor("claudius");
  const b = plain.actor("claudius");
  let memories: unknown[] = [{ role: "system", content: "You are Claudius.", region: "core" }];
  const withLog: number[] = [];
  const without: number[] = [];
  try {
    for (let turn = 1; turn <= WARMUP + TURNS; turn++) {
      const before = memories;
      const [core, ...rest] = before;
      memories = [core, ...[...rest, { role: "user", content: sentence(turn), name: "Ada" }, { role: "assistant", content: sentence(turn + 1) }].slice(-WINDOW)];
      const state = stateAt(turn, memories);
      const trace = traceOf(turn, before, memories);
      let start = performance.now();
      await a.commitTurn({ state, log: { kind: "turn", at: Date.now(), trace } });
      const tLog = performance.now() - start;
      start = performance.now();
      await b.commitTurn({ state });
      const tPlain = performance.now() - start;
      if (turn > WARMUP) (withLog.push(tLog), without.push(tPlain));
    }
    const kept = (a.history?.bounds().newest ?? 0) - (a.history?.bounds().oldest ?? 0) + 1;
    await logged.close();
    await plain.close();
    const bytes = await measureBytes(dirs[0], dirs[1]);
    const perTurn = bytes / kept;
    const p50 = percentile(withLog, 50);
    const floor = percentile(without, 50);
    return [
      { name: "commitTurn p50, 200-memory window, no turn log [floor]", value: floor, unit: "ms" },
      { name: "commitTurn p50, with the turn log and a one-step trace", value: p50, unit: "ms", ratio: p50 / floor },
      { name: "commitTurn p99, no turn log", value: percentile(without, 99), unit: "ms" },
      { name: "commitTurn p99, with the turn log", value: percentile(withLog, 99), unit: "ms" },
      { name: `bytes per kept turn (entry + compressed trace + memories kept for it; ${kept} kept)`, value: perTurn, unit: "B" },
    ];
  } finally {
    await Promise.allSettled([logged.close(), plain.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes of the turn log's databases, plus the memories the logged store keeps beyond the plain one. */
async function measureBytes(loggedDir: string, plainDir: string): Promise<number> {
  const { open } = await import("lmdb");
  const { lmdbOptions } = await import("../../runtime/store/environment.ts");
  const read = async (dir: string, names: string[]) => {
    const root = open({ ...lmdbOptions({ path: dir }), readOnly: true });
    try {
      return Object.fromEntries(names.map((name) => [name, dbBytes(root.openDB({ name, ...(name === "turnTraces" ? { compression: true } : {}) }))]));
    } finally {
      await root.close();
    }
  };
  const l = await read(loggedDir, ["turns", "turnTraces", "memories"]);
  const p = await read(plainDir, ["memories"]);
  return (l.turns as number) + (l.turnTraces as number) + (l.memories as number) - (p.memories as number);
}
