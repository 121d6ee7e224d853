/**
 * Each chaos scenario prints its figures as a small table (what it did, what it measured),
 * so a run of `npm run chaos` says more than pass or fail. Printed to stdout, which vitest
 * shows with the test's output.
 */
export interface ChaosFigure {
  name: string;
  value: number | string;
  unit?: string;
}

export function reportChaos(scenario: string, figures: readonly ChaosFigure[]): void {
  const width = Math.max(...figures.map((f) => f.name.length), 10);
  const lines = figures.map((f) => `  ${f.name.padEnd(width)}  ${typeof f.value === "number" ? formatNumber(f.value) : f.value}${f.unit ? ` ${f.unit}` : ""}`);
  console.log([`chaos: ${scenario}`, ...lines].join("\n"));
}

function formatNumber(n: number): string {
  if (Number.isInteger(n)) return n.toLocaleString("en-US");
  return n.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** Percentile by nearest rank (the benches' rule, test/bench/BenchRow.ts). */
export { percentile } from "../../bench/BenchRow.ts";
