/** One line of the benchmark table. */
export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  /** The target, in words ("< 0.3 ms"). */
  target?: string;
  /** Whether the target was met, when it can be judged from `value`. */
  met?: boolean;
  /** value ÷ the floor measured in the same run. */
  ratio?: number;
}

/** Percentile of a sample, by nearest rank. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Runs `once` `warmup` times unmeasured, then `samples` times: each call's milliseconds, in order. One call in flight at a time. */
export async function timeEach(once: () => Promise<unknown>, o: { warmup: number; samples: number }): Promise<number[]> {
  for (let i = 0; i < o.warmup; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < o.samples; i++) {
    const t0 = process.hrtime.bigint();
    await once();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return samples;
}

/** A measure's p50 and p99 rows, each with its ratio to the same percentile of the floor. */
export function latencyRows(name: string, samples: number[], floor: number[]): BenchRow[] {
  return [50, 99].map((p) => ({ name: `${name} p${p}`, value: percentile(samples, p), unit: "ms", ratio: percentile(samples, p) / percentile(floor, p) }));
}

/** The floor's own p50 and p99 rows. */
export function floorRows(name: string, floor: number[]): BenchRow[] {
  return [50, 99].map((p) => ({ name: `${name} p${p} (floor)`, value: percentile(floor, p), unit: "ms" }));
}
