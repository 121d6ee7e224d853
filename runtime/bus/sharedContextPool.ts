/**
 * The shared contexts a process keeps open for its souls' `useSharedContext`, by name: one
 * context (one watch, one live view) per name however many turns use it, and closed again once
 * nobody has used it for a while.
 *
 * Why bounded: each open context is a watch, on NATS a JetStream consumer on the shared bucket.
 * Kept for the process's life, a node whose souls name a context per conversation (a room, a
 * ticket) would hold one consumer per name ever used. So a context unused for `idleMs`, with no
 * listener (`watch`) still attached, is closed; past `maxOpen` open contexts the least recently
 * used one without a listener is closed at once. A closed context is opened afresh by its next
 * use (its `ready` resolves once its view is read again). Contexts with listeners stay open:
 * a listener asked to hear every change.
 */
import { openSharedContext, type ClosableSharedContext, type SharedChange } from "./sharedContext.ts";
import type { SharedKv } from "./sharedKv.ts";

export interface SharedContextLimits {
  /** A context unused this long, with no listener, is closed (ms). */
  idleMs: number;
  /** Open contexts at most; past it the least recently used one without a listener is closed. */
  maxOpen: number;
}

export const DEFAULT_SHARED_CONTEXT_LIMITS: Readonly<SharedContextLimits> = Object.freeze({ idleMs: 5 * 60_000, maxOpen: 1_000 });

interface Open {
  context: ClosableSharedContext;
  usedAt: number;
  listeners: number;
}

export class SharedContextPool {
  readonly limits: Readonly<SharedContextLimits>;
  readonly #kv: SharedKv;
  readonly #now: () => number;
  /** In order of last use, the least recent first (a use moves a context to the end). */
  readonly #open = new Map<string, Open>();
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(kv: SharedKv, limits: Partial<SharedContextLimits> = {}, now: () => number = Date.now) {
    this.#kv = kv;
    this.#now = now;
    this.limits = Object.freeze({ ...DEFAULT_SHARED_CONTEXT_LIMITS, ...limits });
    if (!(this.limits.idleMs > 0) || !Number.isInteger(this.limits.maxOpen) || this.limits.maxOpen < 1) {
      throw new RangeError(`shared context limits: idleMs must be above 0 and maxOpen a whole number of at least 1 (got ${JSON.stringify(this.limits)})`);
    }
  }

  /** Contexts open now (each holds a watch). */
  get size(): number {
    return this.#open.size;
  }

  /** The context by name, opened (its watch started) when it is not open; counts as a use. */
  context(name: string): ClosableSharedContext {
    const open = this.#use(name);
    return open.context;
  }

  /** Calls `listener` for each change of the context until the returned function is called; the context stays open meanwhile. */
  listen(name: string, listener: (change: SharedChange) => void): () => void {
    const open = this.#use(name);
    open.listeners++;
    const stop = open.context.watch(listener);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      stop();
      open.listeners--;
      open.usedAt = this.#now();
    };
  }

  /** Closes every context unused for `idleMs` and without a listener; returns how many. */
  sweep(): number {
    const cutoff = this.#now() - this.limits.idleMs;
    let closed = 0;
    for (const [name, open] of this.#open) {
      if (open.listeners === 0 && open.usedAt <= cutoff) (this.#close(name, open), closed++);
    }
    return closed;
  }

  /** Closes every context (the node stops). */
  async close(): Promise<void> {
    const all = [...this.#open];
    for (const [name, open] of all) this.#close(name, open);
    await Promise.all(all.map(([, open]) => open.context.close()));
  }

  #use(name: string): Open {
    let open = this.#open.get(name);
    if (open) this.#open.delete(name);
    else {
      const context = openSharedContext(this.#kv, name);
      const fresh: Open = { context, usedAt: 0, listeners: 0 };
      open = fresh;
      // A context that could not start is opened afresh by the next use, not kept broken.
      context.ready.catch(() => this.#open.get(name) === fresh && this.#close(name, fresh));
    }
    open.usedAt = this.#now();
    this.#open.set(name, open);
    this.#evictPastMax();
    this.#sweepLater();
    return open;
  }

  #evictPastMax(): void {
    if (this.#open.size <= this.limits.maxOpen) return;
    for (const [name, open] of this.#open) {
      if (this.#open.size <= this.limits.maxOpen) return;
      if (open.listeners === 0) this.#close(name, open);
    }
  }

  #close(name: string, open: Open): void {
    if (this.#open.get(name) === open) this.#open.delete(name);
    void open.context.close().catch(() => undefined);
    if (this.#open.size === 0 && this.#sweeper) (clearInterval(this.#sweeper), (this.#sweeper = undefined));
  }

  /** A timer while any context is open, so idle ones close without waiting for the next use; it never keeps the process alive. */
  #sweepLater(): void {
    if (this.#sweeper) return;
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1_000, Math.floor(this.limits.idleMs / 4))));
    this.#sweeper.unref?.();
  }
}
