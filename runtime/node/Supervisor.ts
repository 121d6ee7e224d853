/**
 * A node's supervisor, as actor runtimes have one: an actor that fails (its machine errors, or
 * its work throws where nothing catches it) is stopped, with an event naming it and the error,
 * and started again after a backoff that doubles with each failure in a row (from `firstMs` to
 * `maxMs`; a run of `stableMs` without one starts the count again). The node keeps serving
 * meanwhile; what is sent to the actor waits for it (a soul's perceptions stay in its inbox
 * or on the stream). Failures during a restart are counted, not restarted twice.
 */
import { inActor, type SupervisedActor } from "./actorScope.ts";

export interface Backoff {
  firstMs: number;
  maxMs: number;
  /** Time without a failure after which the next one counts as the first. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { firstMs: 250, maxMs: 30_000, stableMs: 60_000 };

export interface ActorFailure {
  actor: string;
  error: string;
  /** How it failed: `its machine failed`, `uncaught exception`, `unhandled rejection`. */
  how: string;
  /** Failures in a row, this one included. */
  failures: number;
  restartInMs: number;
}

export interface SupervisorOptions {
  /** `failed` when an actor fails, `restarted` once it runs again. */
  event(actor: SupervisedActor, type: "failed" | "restarted", data: Record<string, unknown>): void;
  report(err: unknown, what: string): void;
  backoff?: Partial<Backoff>;
  now?: () => number;
}

/** Stops the actor, waits for `delay`, and starts it again. */
export type Restart = (delay: Promise<void>) => Promise<void>;

interface FailureRecord {
  failures: number;
  lastAt: number;
  restarting: boolean;
}

export class Supervisor {
  readonly #backoff: Backoff;
  readonly #now: () => number;
  readonly #records = new Map<string, FailureRecord>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #stopped = false;

  constructor(private readonly o: SupervisorOptions) {
    this.#backoff = { ...DEFAULT_BACKOFF, ...o.backoff };
    this.#now = o.now ?? Date.now;
  }

  /** The actor `name` of soul `soulId`, restarted by `restart` when it fails. */
  actor(name: string, soulId: string, restart: Restart): SupervisedActor {
    const actor: SupervisedActor = { name, soulId, failed: (err, how) => this.#failed(actor, restart, err, how) };
    return actor;
  }

  /** No more restarts (the node is stopping); a failure from now on is only reported. */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #failed(actor: SupervisedActor, restart: Restart, err: unknown, how: string): void {
    const error = err instanceof Error ? err.message : String(err);
    this.o.report(err, `${actor.name} failed (${how})`);
    if (this.#stopped) return;
    const now = this.#now();
    const record = this.#records.get(actor.name) ?? { failures: 0, lastAt: now, restarting: false };
    record.failures = now - record.lastAt > this.#backoff.stableMs ? 1 : record.failures + 1;
    record.lastAt = now;
    this.#records.set(actor.name, record);
    if (record.restarting) return;
    const restartInMs = Math.min(this.#backoff.firstMs * 2 ** (record.failures - 1), this.#backoff.maxMs);
    const failure: ActorFailure = { actor: actor.name, error, how, failures: record.failures, restartInMs };
    this.o.event(actor, "failed", { ...failure });
    record.restarting = true;
    // The new instance is the actor's too: what it starts is attributed to it.
    inActor(actor, () => restart(this.#sleep(restartInMs))).then(
      () => {
        record.restarting = false;
        if (!this.#stopped) this.o.event(actor, "restarted", { actor: actor.name, failures: record.failures });
      },
      (restartError: unknown) => {
        record.restarting = false;
        this.#failed(actor, restart, restartError, "its restart failed");
      },
    );
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => (this.#timers.delete(timer), resolve()), ms);
      this.#timers.add(timer);
    });
  }
}
