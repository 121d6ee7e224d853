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
