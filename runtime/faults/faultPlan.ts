import { FAULT_POINTS, isFaultPoint, type Fault, type FaultDetail, type FaultKind, type FaultPoint } from "./faultPoints.ts";

/** One rule of a plan: which occurrences of a point get which fault. */
export interface FaultRule {
  point: FaultPoint;
  fault: Fault;
  /** Only occurrences whose detail has these values count (all of them, by equality). */
  match?: Readonly<Record<string, string | number | boolean>>;
  /** The first matching occurrence the rule applies to, counting from 1 (default 1). */
  nth?: number;
  /** How many matching occurrences from `nth` on get the fault (default 1; `Infinity`: every one). */
  times?: number;
}

/** One occurrence of a point, as a plan saw it. */
export interface FaultOccurrence {
  point: FaultPoint;
  detail: FaultDetail;
  /** The fault injected there, if any. */
  fault?: Fault;
}

/** An operation held at a point (`hold`): the test does what it races against, then lets it go on. */
export interface HeldOperation {
  point: FaultPoint;
  detail: FaultDetail;
  /** Lets the held operation go on (`before`: it runs now; `after`: its caller hears now). */
  release(): void;
}

/** What the point does with one occurrence: the fault, and for a hold, the wait (called where it holds: before the operation, or once it landed). */
export interface Injection {
  fault: Fault;
  hold?: () => Promise<void>;
}

/** What a point asks: none, or the fault for this occurrence. */
export interface FaultInjector {
  decide(point: FaultPoint, detail: FaultDetail): Injection | undefined;
}

/** The most occurrences a plan remembers (a long soak must not grow it for ever). */
const MAX_SEEN = 10_000;

/**
 * A fault schedule: rules by point and occurrence, with a record of every occurrence it saw
 * (so a test can assert its fault really fired) and the holds waiting for their release.
 */
export class FaultPlan implements FaultInjector {
  readonly seen: FaultOccurrence[] = [];
  readonly #rules: { rule: FaultRule; matched: number }[];
  readonly #counts = new Map<FaultPoint, number>();
  readonly #heldWaiters: { point: FaultPoint; resolve: (held: HeldOperation) => void }[] = [];
  readonly #heldUnclaimed: HeldOperation[] = [];

  constructor(rules: readonly FaultRule[] = []) {
    this.#rules = rules.map((rule) => ({ rule: checkRule(rule), matched: 0 }));
  }

  /** Adds a rule; its occurrences count from now. */
  add(rule: FaultRule): this {
    this.#rules.push({ rule: checkRule(rule), matched: 0 });
    return this;
  }

  /** How many times the point was reached. */
  count(point: FaultPoint): number {
    return this.#counts.get(point) ?? 0;
  }

  /** The occurrences of a point that got a fault. */
  injected(point?: FaultPoint): FaultOccurrence[] {
    return this.seen.filter((o) => o.fault && (point === undefined || o.point === point));
  }

  /**
   * Resolves with the next operation held at `point` (or one held already and not yet claimed):
   * for a `before` hold, once it reached the point and waits to run; for an `after` hold, once it landed.
   */
  reached(point: FaultPoint): Promise<HeldOperation> {
    const index = this.#heldUnclaimed.findIndex((h) => h.point === point);
    if (index >= 0) return Promise.resolve(this.#heldUnclaimed.splice(index, 1)[0]!);
    return new Promise((resolve) => this.#heldWaiters.push({ point, resolve }));
  }

  /** Lets every held operation go and stops injecting (a test's clean-up). */
  clear(): void {
    this.#rules.length = 0;
    for (const held of this.#heldUnclaimed.splice(0)) held.release();
  }

  decide(point: FaultPoint, detail: FaultDetail): Injection | undefined {
    this.#counts.set(point, this.count(point) + 1);
    let fault: Fault | undefined;
    for (const entry of this.#rules) {
      const { rule } = entry;
      if (rule.point !== point || !matches(rule.match, detail)) continue;
      entry.matched += 1;
      const first = rule.nth ?? 1;
      const times = rule.times ?? 1;
      if (fault === undefined && entry.matched >= first && entry.matched < first + times) fault = rule.fault;
    }
    if (this.seen.length >= MAX_SEEN) this.seen.shift();
    this.seen.push(fault ? { point, detail, fault } : { point, detail });
    if (!fault) return undefined;
    if (fault.kind !== "hold") return { fault };
    return { fault, hold: () => this.#hold(point, detail) };
  }

  #hold(point: FaultPoint, detail: FaultDetail): Promise<void> {
    return new Promise<void>((release) => {
      const held: HeldOperation = { point, detail, release: () => release() };
      const waiter = this.#heldWaiters.findIndex((w) => w.point === point);
      if (waiter >= 0) this.#heldWaiters.splice(waiter, 1)[0]!.resolve(held);
      else this.#heldUnclaimed.push(held);
    });
  }
}

function matches(match: FaultRule["match"], detail: FaultDetail): boolean {
  if (!match) return true;
  return Object.entries(match).every(([key, value]) => detail[key] === value);
}

const KINDS: readonly FaultKind[] = ["fail", "ackLost", "delay", "hold", "crash"];

function checkRule(rule: FaultRule): FaultRule {
  if (!isFaultPoint(rule.point)) throw new Error(`fault rule: unknown point ${JSON.stringify(rule.point)} (known: ${FAULT_POINTS.join(", ")})`);
  if (!rule.fault || !KINDS.includes(rule.fault.kind)) throw new Error(`fault rule at ${rule.point}: unknown fault ${JSON.stringify(rule.fault)} (kinds: ${KINDS.join(", ")})`);
  if (rule.fault.kind === "delay" && !(typeof rule.fault.ms === "number" && rule.fault.ms >= 0)) throw new Error(`fault rule at ${rule.point}: a delay needs ms >= 0`);
  if (rule.nth !== undefined && !(Number.isInteger(rule.nth) && rule.nth >= 1)) throw new Error(`fault rule at ${rule.point}: nth counts from 1`);
  if (rule.times !== undefined && !(rule.times >= 1)) throw new Error(`fault rule at ${rule.point}: times must be at least 1`);
  return rule;
}

/**
 * The plan in `ENSOUL_FAULTS` (a JSON array of rules), for a child process a test starts and
 * wants killed or failed at a point. Test use only: a node started without it injects nothing.
 */
export function planFromEnvironment(text: string | undefined): FaultPlan | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch (err) {
    throw new Error(`ENSOUL_FAULTS is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(rules)) throw new Error("ENSOUL_FAULTS must be a JSON array of rules ({ point, fault: { kind }, nth?, times?, match? })");
  return new FaultPlan(rules as FaultRule[]);
}
