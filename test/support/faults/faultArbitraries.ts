/**
 * fast-check arbitraries for fault schedules: a property test draws which occurrences of which
 * points fail, lose their acknowledgement or are slow, installs the plan, runs its scenario,
 * and checks its invariants once the faults clear.
 */
import fc from "fast-check";
import { installFaults, FaultPlan, type Fault, type FaultPoint, type FaultRule } from "../../../runtime/faults/index.ts";

/** The faults a property draws from by default: the ones a scenario survives without a kill. */
export const SURVIVABLE: readonly Fault["kind"][] = ["fail", "ackLost", "delay"];

export interface ScheduleOptions {
  /** Points the schedule may name. */
  points: readonly FaultPoint[];
  /** Fault kinds it may use (default SURVIVABLE). */
  kinds?: readonly Fault["kind"][];
  /** Rules at most (default 4). */
  maxRules?: number;
  /** Latest occurrence a rule may start at (default 6). */
  maxNth?: number;
  /** Longest delay (default 30 ms). */
  maxDelayMs?: number;
}

export function faultRule(options: ScheduleOptions): fc.Arbitrary<FaultRule> {
  const kinds = options.kinds ?? SURVIVABLE;
  return fc.record({
    point: fc.constantFrom(...options.points),
    kind: fc.constantFrom(...kinds),
    ms: fc.integer({ min: 0, max: options.maxDelayMs ?? 30 }),
    nth: fc.integer({ min: 1, max: options.maxNth ?? 6 }),
    times: fc.integer({ min: 1, max: 3 }),
  }).map(({ point, kind, ms, nth, times }) => ({ point, nth, times, fault: kind === "delay" ? { kind, ms } : { kind } }));
}

export function faultSchedule(options: ScheduleOptions): fc.Arbitrary<FaultRule[]> {
  return fc.array(faultRule(options), { minLength: 0, maxLength: options.maxRules ?? 4 });
}

/** Runs `body` with `rules` installed as this process's plan; the plan is cleared after. */
export async function withFaults<T>(rules: readonly FaultRule[], body: (plan: FaultPlan) => Promise<T>): Promise<T> {
  const plan = new FaultPlan(rules);
  const uninstall = installFaults(plan);
  try {
    return await body(plan);
  } finally {
    plan.clear();
    uninstall();
  }
}
