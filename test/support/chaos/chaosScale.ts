/**
 * The chaos suite runs at two sizes: the full figures under `npm run chaos`
 * (`ENSOUL_CHAOS=full`), and a short version inside `npm test`, small enough to keep the whole
 * suite inside CI's budget while still exercising every fault. A scenario picks its numbers
 * with `chaosSize({ short, full })`, and its test timeout with `chaosTimeout`.
 */
export function chaosFull(): boolean {
  return process.env.ENSOUL_CHAOS === "full";
}

export function chaosSize<T>(sizes: { short: T; full: T }): T {
  return chaosFull() ? sizes.full : sizes.short;
}

/** A test timeout for a scenario: generous, since the machine is shared and a full run is long. */
export function chaosTimeout(sizes: { short: number; full: number }): number {
  return chaosSize(sizes);
}
