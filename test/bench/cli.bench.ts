/**
 * How fast `ensoul --help` starts: the median wall time of the built command (what the
 * installed package's bin runs) against the floor, `node -e 0`, measured in the same run and
 * interleaved so a busy machine slows both alike. The source run (tsx, what a checkout's bin
 * runs) is shown beside it for comparison. The bench builds dist/ first (`npm run build`), so
 * what it measures is the sources as they are now.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { percentile, type BenchRow } from "./BenchRow.ts";

const root = join(import.meta.dirname, "..", "..");
const RUNS = 21;
const TARGET_MS = 200;

/** Wall milliseconds of one run of `node <args>`; throws if it fails, so a broken command cannot look fast. */
function timeNode(args: string[]): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export async function run(): Promise<BenchRow[]> {
  const built = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stdout}\n${built.stderr}`);

  const commands = {
    floor: ["-e", "0"],
    dist: [join(root, "dist", "runtime", "cli", "main.js"), "--help"],
    source: ["--import", "tsx", join(root, "runtime", "cli", "main.ts"), "--help"],
  };
  const samples: Record<keyof typeof commands, number[]> = { floor: [], dist: [], source: [] };
  // One warm-up of each (disk cache), then interleaved runs.
  for (const args of Object.values(commands)) timeNode(args);
  for (let i = 0; i < RUNS; i++) {
    for (const [name, args] of Object.entries(commands) as [keyof typeof commands, string[]][]) samples[name].push(timeNode(args));
  }

  const floor = percentile(samples.floor, 50);
  const dist = percentile(samples.dist, 50);
  const source = percentile(samples.source, 50);
  return [
    { name: "node -e 0 (the floor), median", value: floor, unit: "ms" },
    { name: "ensoul --help, built (dist/), median", value: dist, unit: "ms", ratio: dist / floor, target: `< ${TARGET_MS} ms`, met: dist < TARGET_MS },
    { name: "ensoul --help, from source (tsx), median", value: source, unit: "ms", ratio: source / floor },
  ];
}
