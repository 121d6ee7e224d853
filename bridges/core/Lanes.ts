/**
 * Two small pieces the bridge's queues share (ChannelQueue.ts, ReplyLanes.ts): a chain of tasks
 * per key, each running after the key's tasks before it, whatever they ended in; and waits
 * that a close ends at once, so a bridge stopping is not held by a Retry-After or a backoff.
 */

/** One chain of tasks per key (a channel): in order within a key, independent across keys. */
export class Lanes {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` once everything queued for `key` before it has ended. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    // The tail settles whatever the task ended in (never rejects), and forgets itself once last.
    const forget = () => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
    const tail: Promise<void> = result.then(forget, forget);
    this.#tails.set(key, tail);
    return result;
  }

  /** Resolves once no key has a task queued or running. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }
}

/** Timed waits that `close` ends now (and every later one at once). */
export class Waits {
  readonly #wakes = new Set<() => void>();
  #closed = false;

  /** `sleep`: a test's own clock; by default a timer. */
  constructor(private readonly sleep?: (ms: number) => Promise<void>) {}

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
    for (const wake of [...this.#wakes]) wake();
  }

  wait(ms: number): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const wake = () => {
        clearTimeout(timer);
        this.#wakes.delete(wake);
        resolve();
      };
      this.#wakes.add(wake);
      if (this.sleep) void this.sleep(ms).then(wake, wake);
      else timer = setTimeout(wake, ms);
    });
  }
}
