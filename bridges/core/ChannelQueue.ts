/**
 * One send queue per channel: a bridge's posts and edits to one channel go out one at a time,
 * in order, so a reply's pieces never overtake each other and a rate-limited channel does
 * not hold up the others. A platform call that fails with a rate limit (`retryAfterMs` on the
 * error, which each platform sets from its 429's Retry-After) waits that long and runs again;
 * nothing is dropped for it. Other failures reject the call: the caller decides (a reply the
 * platform refused stays unacknowledged on the bus and comes back).
 */

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
  readonly #tails = new Map<string, Promise<unknown>>();
  readonly #o: Required<Omit<ChannelQueueOptions, "onRateLimited">> & Pick<ChannelQueueOptions, "onRateLimited">;

  constructor(options: ChannelQueueOptions = {}) {
    this.#o = {
      maxAttempts: options.maxAttempts ?? 10,
      maxWaitMs: options.maxWaitMs ?? 60_000,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
    };
  }

  /** Runs `call` after everything queued for `channel` before it. */
  run<T>(channel: string, call: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(channel) ?? Promise.resolve();
    const result = before.then(() => this.#attempt(channel, call), () => this.#attempt(channel, call));
    const tail = result.catch(() => undefined);
    this.#tails.set(channel, tail);
    void tail.then(() => {
      if (this.#tails.get(channel) === tail) this.#tails.delete(channel);
    });
    return result;
  }

  /** Resolves once every queued call has finished. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }

  async #attempt<T>(channel: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        const wait = retryAfterOf(err);
        if (wait === undefined || attempt >= this.#o.maxAttempts) throw err;
        const ms = Math.min(wait, this.#o.maxWaitMs);
        this.#o.onRateLimited?.(channel, ms);
        await this.#o.sleep(ms);
      }
    }
  }
}
