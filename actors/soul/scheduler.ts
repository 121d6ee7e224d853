import type { ScheduledEntry } from "../../runtime/store/index.ts";

/**
 * Time as the soul sees it. Injected so tests can move time forward instead of sleeping;
 * its `setTimeout`/`clearTimeout` pair also fits XState's own clock option.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A clock that only moves when told to. */
export interface ManualClock extends Clock {
  /** Moves time forward, running every timer that falls due, in order. */
  advance(ms: number): void;
  /** Timers not yet run. */
  pending(): number;
}

export function createManualClock(start = 0): ManualClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: ManualClock = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        let due: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry;
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = until;
    },
    pending: () => timers.size,
  };
  return clock;
}

/** setTimeout's longest delay; longer waits are armed in steps. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * The timers of one soul's scheduled events. The entries themselves live in the store (they
 * are written in the turn commit that scheduled them); this only arms them, so after a
 * restart the same entries are armed again, and one whose time passed fires at once.
 */
export class Scheduler {
  readonly #clock: Clock;
  readonly #fire: (entry: ScheduledEntry) => void;
  readonly #armed = new Map<string, { entry: ScheduledEntry; handle: unknown }>();

  constructor(clock: Clock, fire: (entry: ScheduledEntry) => void) {
    this.#clock = clock;
    this.#fire = fire;
  }

  arm(entry: ScheduledEntry): void {
    this.cancel(entry.id);
    const wait = Math.max(0, entry.at - this.#clock.now());
    const handle = this.#clock.setTimeout(() => {
      if (this.#armed.get(entry.id)?.handle !== handle) return;
      if (entry.at > this.#clock.now()) {
        this.arm(entry);
        return;
      }
      this.#armed.delete(entry.id);
      this.#fire(entry);
    }, Math.min(wait, MAX_DELAY));
    this.#armed.set(entry.id, { entry, handle });
  }

  cancel(id: string): void {
    const armed = this.#armed.get(id);
    if (!armed) return;
    this.#clock.clearTimeout(armed.handle);
    this.#armed.delete(id);
  }

  has(id: string): boolean {
    return this.#armed.has(id);
  }

  entries(): ScheduledEntry[] {
    return [...this.#armed.values()].map((a) => a.entry);
  }

  /** Disarms everything (the soul stops); the entries stay in the store for the next activation. */
  clear(): void {
    for (const { handle } of this.#armed.values()) this.#clock.clearTimeout(handle);
    this.#armed.clear();
  }
}
