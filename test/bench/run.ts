/**
 * `npm run bench`: runs every test/bench/*.bench.ts (or those named on the command line)
 * and prints one table. Each bench module exports `run(): Promise<BenchRow[]>`; where a
 * floor exists (raw NATS request/reply, raw LMDB put) the row carries its ratio to the
 * floor measured in the same run.
 */
import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchRow } from "./BenchRow.ts";

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();

const rows: (BenchRow & { suite: string })[] = [];
for (const file of files) {
  const suite = basename(file, ".bench.ts");
  process.stderr.write(`bench: ${suite}…\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { run: () => Promise<BenchRow[]> };
  for (const row of await mod.run()) rows.push({ suite, ...row });
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3));
const table = rows.map((r) => ({
  suite: r.suite,
  measure: r.name,
  value: `${fmt(r.value)} ${r.unit}`,
  ratio: r.ratio === undefined ? "" : `${fmt(r.ratio)}x`,
  target: r.target ?? "",
  met: r.met === undefined ? "" : r.met ? "yes" : "NO",
}));
const cols = ["suite", "measure", "value", "ratio", "target", "met"] as const;
const width = Object.fromEntries(cols.map((c) => [c, Math.max(c.length, ...table.map((t) => t[c].length))]));
const line = (t: Record<(typeof cols)[number], string>) => cols.map((c) => t[c].padEnd(width[c])).join("  ");
console.log(line(Object.fromEntries(cols.map((c) => [c, c])) as Record<(typeof cols)[number], string>));
console.log(cols.map((c) => "-".repeat(width[c])).join("  "));
for (const t of table) console.log(line(t));
