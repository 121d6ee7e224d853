/**
 * The Discord messages whose perceptions wait for the bus. Discord sends a message once and
 * never again, so a message whose perception the bus could not store (NATS away for longer
 * than the bus waits on a publish) must not wait for the next start: it stays in the ledger,
 * unpublished, and this publishes it, and every message kept behind it, with backoff while the
 * node runs.
 *
 * While it waits, the intake keeps new messages (decided by the policy, recorded, not
 * published), so none overtakes it: the soul perceives them in the order they were typed. The
 * backlog is over once every kept message is out; then messages are published as they come.
 */
import type { BridgeRuntime } from "../core/index.ts";

/** The first wait before kept messages are published again; it doubles with each failed try. */
export const PUBLISH_RETRY_FIRST_MS = 1_000;
/** The longest wait between two tries. */
export const PUBLISH_RETRY_MAX_MS = 30_000;

/** The wait after the `failures`-th failed try in a row. */
export function publishRetryDelay(failures: number): number {
  return Math.min(PUBLISH_RETRY_MAX_MS, PUBLISH_RETRY_FIRST_MS * 2 ** Math.min(Math.max(0, failures - 1), 20));
}

export class PerceptionBacklog {
  #waiting = false;
  #failures = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #trying: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly runtime: BridgeRuntime,
    private readonly delay: (failures: number) => number = publishRetryDelay,
  ) {}

  /** Messages wait for the bus: new ones are kept behind them, not published. */
  get waiting(): boolean {
    return this.#waiting;
  }

  /** A message is kept unpublished: publish it (and what follows it) with backoff from now on. */
  start(): void {
    if (this.#waiting || this.#closed) return;
    this.#waiting = true;
    this.#failures = 0;
    this.#schedule(this.delay(1));
  }

  /** No more tries (the bridge stops): what is kept stays in the ledger for the next start. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void (this.#trying ??= this.#try().finally(() => (this.#trying = undefined))), ms);
    this.#timer.unref?.();
  }

  async #try(): Promise<void> {
    try {
      await this.runtime.publishUnpublished();
    } catch (err) {
      if (this.#closed) return;
      this.#failures++;
      const ms = this.delay(this.#failures);
      this.runtime.report(err, `publishing the Discord messages kept while the bus is away (try ${this.#failures}; the next in ${Math.round(ms / 100) / 10} s)`);
      this.#schedule(ms);
      return;
    }
    this.#failures = 0;
    // A message kept while this try ran goes with the next (one kept after this check starts it: the intake sees to that).
    this.#waiting = this.runtime.ledger.unpublished().length > 0;
    if (this.#waiting) this.#schedule(0);
  }
}
