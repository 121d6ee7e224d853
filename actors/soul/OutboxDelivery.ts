/**
 * Delivery of a soul's committed outbox entries, one at a time in commit order; a failed entry
 * stays at the head and is retried with backoff, and later entries wait behind it.
 *
 * The order of a soul's perceptions and speech is kept at five points; docs/ARCHITECTURE.md
 * ("The order of a soul's perceptions and speech") says how they relate. This is one of them.
 */
import type { OutboxEntry } from "../../runtime/store/index.ts";
import type { Clock } from "./scheduler.ts";

/** The first wait before a failed delivery is tried again; it doubles with each failure. */
export const REDELIVERY_FIRST_MS = 250;
/** The longest wait between two tries. */
export const REDELIVERY_MAX_MS = 30_000;

/** The wait after the `failures`-th failed try in a row of the same entry. */
export function redeliveryDelay(failures: number): number {
  return Math.min(REDELIVERY_MAX_MS, REDELIVERY_FIRST_MS * 2 ** Math.min(Math.max(0, failures - 1), 20));
}

export interface OutboxDeliveryOptions {
  clock: Clock;
  /** Delivers one entry and acknowledges it; rejects when it was not delivered. */
  deliver(entry: OutboxEntry): Promise<void>;
  /** A try failed: it is tried again in `retryInMs`, or, stopping, left in the outbox (undefined). */
  failed(entry: OutboxEntry, err: unknown, retryInMs: number | undefined): void;
  /** Counts tries under way, so the soul is not idle during one (the waits between them do not count). */
  busy(delta: 1 | -1): void;
}

/**
 * A soul's committed outbox on its way out: one entry at a time, in commit order.
 *
 * Why an entry whose delivery failed holds up everything after it: speech is a conversation,
 * and an answer that reaches the listener before the one it follows reads wrong (a bridge
 * would post them out of order). So the failed entry stays at the head of the line and is
 * tried again with backoff (REDELIVERY_FIRST_MS doubling up to REDELIVERY_MAX_MS) on its own,
 * without waiting for the soul's next perception or activation, and what later turns commit
 * queues up behind it. The waits do not make the soul busy: it goes on taking perceptions.
 *
 * `stop` ends the retries; what is still undelivered stays in the store's outbox and goes out
 * when the soul is next activated, in the same order.
 */
export class OutboxDelivery {
  readonly #o: OutboxDeliveryOptions;
  readonly #line: OutboxEntry[] = [];
  #running: Promise<void> | undefined;
  /** Failed tries in a row of the entry at the head of the line. */
  #failures = 0;
  #stopped = false;
  #wake: (() => void) | undefined;

  constructor(options: OutboxDeliveryOptions) {
    this.#o = options;
  }

  /** Entries wait behind one whose delivery failed. */
  get waiting(): boolean {
    return this.#failures > 0;
  }

  /** Entries not yet delivered, the head first. */
  get undelivered(): number {
    return this.#line.length;
  }

  add(entries: readonly OutboxEntry[]): void {
    this.#line.push(...entries);
    this.#start();
  }

  /** No more retries: a wait under way ends now, and a failed entry stays in the outbox. */
  stop(): void {
    this.#stopped = true;
    this.#wake?.();
  }

  /** Resolves when nothing is being delivered (after `stop`, once the try under way is over). */
  settled(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  #start(): void {
    if (this.#running || this.#line.length === 0 || (this.#stopped && this.#failures > 0)) return;
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
      this.#start();
    });
  }

  async #run(): Promise<void> {
    this.#o.busy(1);
    try {
      while (this.#line.length > 0) {
        const entry = this.#line[0]!;
        try {
          await this.#o.deliver(entry);
          this.#line.shift();
          this.#failures = 0;
          continue;
        } catch (err) {
          this.#failures++;
          const retryInMs = this.#stopped ? undefined : redeliveryDelay(this.#failures);
          this.#o.failed(entry, err, retryInMs);
          if (retryInMs === undefined) return;
          this.#o.busy(-1);
          try {
            await this.#sleep(retryInMs);
          } finally {
            this.#o.busy(1);
          }
          if (this.#stopped) return;
        }
      }
    } finally {
      this.#o.busy(-1);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#o.clock.setTimeout(() => this.#wake?.(), ms);
      this.#wake = () => {
        this.#wake = undefined;
        this.#o.clock.clearTimeout(timer);
        resolve();
      };
    });
  }
}
