/**
 * One send queue per channel: a bridge's posts and edits to one channel go out one at a time,
 * in order, so a reply's pieces never overtake each other and a rate-limited channel does
 * not hold up the others. A platform call that fails with a rate limit (`retryAfterMs` on the
 * error, which each platform sets from its 429's Retry-After) waits that long and runs again;
 * nothing is dropped for it. Other failures reject the call: the caller decides (EditingSink
 * tries a reply again later, from the ledger). Closed (a bridge stopping), it waits out no
 * more rate limits: a call waiting for one fails now with it, and the caller keeps what it
 * could not post for the next start.
 */
import { Lanes, Waits } from "./Lanes.ts";

export interface RateLimited {
  retryAfterMs: number;
}

/** A rate limit the SDK did not wait out itself, as the queue understands it. */
export class RateLimitedError extends Error implements RateLimited {
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.name = "RateLimitedError";
    this.retryAfterMs = retryAfterMs;
  }
}

export function retryAfterOf(err: unknown): number | undefined {
  const ms = (err as Partial<RateLimited> | undefined)?.retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

export interface ChannelQueueOptions {
  /** Rate-limited attempts per call before it fails (default 10). */
  maxAttempts?: number;
  /** The longest wait honoured for one Retry-After (default 60 s). */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  onRateLimited?: (channel: string, waitMs: number) => void;
}

export class ChannelQueue {
  readonly #lanes = new Lanes();
  readonly #waits: Waits;
  readonly #o: Required<Pick<ChannelQueueOptions, "maxAttempts" | "maxWaitMs">> & Pick<ChannelQueueOptions, "onRateLimited">;

  constructor(options: ChannelQueueOptions = {}) {
    this.#o = {
      maxAttempts: options.maxAttempts ?? 10,
      maxWaitMs: options.maxWaitMs ?? 60_000,
      ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
    };
    this.#waits = new Waits(options.sleep);
  }

  /** Runs `call` after everything queued for `channel` before it. */
  run<T>(channel: string, call: () => Promise<T>): Promise<T> {
    return this.#lanes.run(channel, () => this.#attempt(channel, call));
  }

  /** No more rate limits waited out: the waits under way end now, their calls failing with the rate limit. */
  close(): void {
    this.#waits.close();
  }

  /** Resolves once every queued call has finished. */
  idle(): Promise<void> {
    return this.#lanes.idle();
  }

  async #attempt<T>(channel: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        const wait = retryAfterOf(err);
        if (wait === undefined || attempt >= this.#o.maxAttempts || this.#waits.closed) throw err;
        const ms = Math.min(wait, this.#o.maxWaitMs);
        this.#o.onRateLimited?.(channel, ms);
        await this.#waits.wait(ms);
        if (this.#waits.closed) throw err;
      }
    }
  }
}
