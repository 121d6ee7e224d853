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
  /** The rate-limit waits under way: a close ends them. */
  readonly #waits = new Set<() => void>();
  #closed = false;
  readonly #o: Required<Pick<ChannelQueueOptions, "maxAttempts" | "maxWaitMs">> & Pick<ChannelQueueOptions, "onRateLimited">;
  readonly #sleep: ChannelQueueOptions["sleep"];

  constructor(options: ChannelQueueOptions = {}) {
    this.#o = {
      maxAttempts: options.maxAttempts ?? 10,
      maxWaitMs: options.maxWaitMs ?? 60_000,
      ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
    };
    this.#sleep = options.sleep;
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

  /** No more rate limits waited out: the waits under way end now, their calls failing with the rate limit. */
  close(): void {
    this.#closed = true;
    for (const wake of [...this.#waits]) wake();
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
        if (wait === undefined || attempt >= this.#o.maxAttempts || this.#closed) throw err;
        const ms = Math.min(wait, this.#o.maxWaitMs);
        this.#o.onRateLimited?.(channel, ms);
        await this.#wait(ms);
        if (this.#closed) throw err;
      }
    }
  }

  #wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const wake = () => {
        clearTimeout(timer);
        this.#waits.delete(wake);
        resolve();
      };
      this.#waits.add(wake);
      if (this.#sleep) void this.#sleep(ms).then(wake, wake);
      else timer = setTimeout(wake, ms);
    });
  }
}
