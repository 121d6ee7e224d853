/**
 * A token bucket per client address: `burst` requests at once, refilled at `perMinute`. A
 * flood gets 429 with Retry-After instead of filling the soul's queue. Addresses idle long
 * enough to be full again are forgotten, so the map stays as small as the active clients.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #perMs: number;

  constructor(
    private readonly burst: number,
    perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#perMs = perMinute / 60_000;
  }

  /** 0 when the request may go now, else the milliseconds until it may. */
  take(client: string): number {
    const now = this.now();
    const bucket = this.#buckets.get(client) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.#buckets.set(client, bucket);
      if (this.#buckets.size > 10_000) this.#forgetFull(now);
      return 0;
    }
    this.#buckets.set(client, bucket);
    return Math.ceil((1 - bucket.tokens) / this.#perMs);
  }

  #forgetFull(now: number): void {
    for (const [client, b] of this.#buckets) if (b.tokens + (now - b.at) * this.#perMs >= this.burst) this.#buckets.delete(client);
  }
}
