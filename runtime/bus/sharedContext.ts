/**
 * One shared context as its users see it: a named set of keys in the cluster's shared
 * key-value state (sharedKv.ts), with a live local view (`data`), fresh reads, writes that never
 * lose a concurrent write, and change listeners. `useSharedContext` gives a soul one; a bridge,
 * a script or a test opens one with `openSharedContext(bus.sharedKv(), name)`.
 *
 * Writes go straight to the bucket (they are cluster state, not a soul's). `update` is a
 * read-modify-write with compare-and-set: it reads the key fresh, applies the function, and
 * writes only if nobody wrote the key meanwhile; otherwise it reads again and re-applies, so
 * of two writers racing, both writes count.
 */
import { isSharedConflict, SharedConflictError, type JsonValue, type SharedEntry, type SharedKv } from "./sharedKv.ts";

export interface SharedUpdateOptions {
  /** Attempts before giving up with SharedConflictError (default 32): only under heavy contention. */
  maxAttempts?: number;
}

export interface SharedChange {
  key: string;
  /** undefined: the key was deleted. */
  value: JsonValue | undefined;
  revision: number;
}

export interface SharedContext {
  readonly name: string;
  /** Resolves once `data` holds the context's keys and the watch that keeps it current runs. */
  readonly ready: Promise<void>;
  /** The context as last seen here (after `ready`): kept current by a watch, so it may lag a write elsewhere by a moment. */
  readonly data: Readonly<Record<string, JsonValue>>;
  /** The highest revision seen here; 0 before anything was seen. */
  readonly revision: number;
  /** The key's value, read from the bucket now (not from `data`). */
  get<T extends JsonValue = JsonValue>(key: string): Promise<T | undefined>;
  /** Writes the value whatever the key holds (last writer wins); resolves to the new revision. */
  set(key: string, value: JsonValue): Promise<number>;
  /**
   * Read-modify-write that no concurrent write can undo: `fn` gets the key's current value
   * (undefined if none) and returns the new one, or undefined to leave the key as it is. On a
   * conflict it is called again with the fresh value, so it must be a pure function of its input.
   * Resolves to the value written (or kept).
   */
  update<T extends JsonValue = JsonValue>(key: string, fn: (current: T | undefined) => T | undefined, opts?: SharedUpdateOptions): Promise<T | undefined>;
  delete(key: string): Promise<void>;
  /** Calls `listener` for each change to the context from now on (writes here included); returns the function that stops it. */
  watch(listener: (change: SharedChange) => void): () => void;
}

/** A context as `openSharedContext` gives it: its opener closes it. */
export interface ClosableSharedContext extends SharedContext {
  /** Stops the watch (on NATS: its consumer goes): `data` is no longer kept current. Reads and writes still work. */
  close(): Promise<void>;
}

const DEFAULT_ATTEMPTS = 32;

export function openSharedContext(kv: SharedKv, name: string): ClosableSharedContext {
  return new LiveSharedContext(kv, name);
}

class LiveSharedContext implements ClosableSharedContext {
  readonly ready: Promise<void>;
  readonly #kv: SharedKv;
  #stopWatch: (() => void) | undefined;
  #closed = false;
  readonly #data = new Map<string, { value: JsonValue | undefined; revision: number }>();
  readonly #listeners = new Set<(change: SharedChange) => void>();
  #revision = 0;

  constructor(
    kv: SharedKv,
    readonly name: string,
  ) {
    this.#kv = kv;
    this.ready = this.#start();
    // A context nobody awaits must not fail the process; a caller of `ready` still sees the error.
    this.ready.catch(() => undefined);
  }

  /** Watch first, then read: a write between the two is seen by the watch, and revisions decide which value is newer. */
  async #start(): Promise<void> {
    this.#stopWatch = await this.#kv.watch(this.name, (entry) => this.#seen(entry));
    // Closed while the watch was starting: it stops as soon as it exists.
    if (this.#closed) return this.#stopWatch();
    for (const entry of await this.#kv.entries(this.name)) this.#seen(entry, false);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    this.#stopWatch?.();
    await this.ready.catch(() => undefined);
  }

  #seen(entry: SharedEntry, announce = true): void {
    const known = this.#data.get(entry.key);
    if (known && known.revision >= entry.revision) return;
    this.#data.set(entry.key, { value: entry.value, revision: entry.revision });
    if (entry.revision > this.#revision) this.#revision = entry.revision;
    if (!announce) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener({ key: entry.key, value: entry.value, revision: entry.revision });
      } catch {
        // one listener's failure must not keep the others from hearing the change
      }
    }
  }

  get data(): Readonly<Record<string, JsonValue>> {
    const out: Record<string, JsonValue> = {};
    for (const [key, { value }] of [...this.#data].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) if (value !== undefined) out[key] = value;
    return Object.freeze(out);
  }

  get revision(): number {
    return this.#revision;
  }

  async get<T extends JsonValue = JsonValue>(key: string): Promise<T | undefined> {
    const entry = await this.#kv.get(this.name, key);
    if (entry) this.#seen(entry);
    return entry?.value as T | undefined;
  }

  async set(key: string, value: JsonValue): Promise<number> {
    return (await this.#update(key, () => value, {})).revision;
  }

  async update<T extends JsonValue = JsonValue>(key: string, fn: (current: T | undefined) => T | undefined, opts: SharedUpdateOptions = {}): Promise<T | undefined> {
    return (await this.#update(key, fn, opts)).value;
  }

  async #update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T | undefined, opts: SharedUpdateOptions): Promise<{ value: T | undefined; revision: number }> {
    const attempts = Math.max(1, opts.maxAttempts ?? DEFAULT_ATTEMPTS);
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#kv.get(this.name, key);
      const current = entry?.value as T | undefined;
      // Decoded afresh on every read, so `fn` may change `current` in place without touching `data`.
      const next = fn(current);
      if (next === undefined) return { value: current, revision: entry?.revision ?? 0 };
      try {
        const revision = await this.#kv.swap(this.name, key, next, entry?.revision ?? 0);
        this.#seen({ key, value: next, revision });
        return { value: next, revision };
      } catch (err) {
        if (!isSharedConflict(err) || attempt + 1 >= attempts) throw err instanceof SharedConflictError ? conflictExhausted(this.name, key, attempts, err) : err;
        // Writers that lost together should not collide again at once.
        await sleep(Math.random() * Math.min(100, 2 ** attempt));
      }
    }
  }

  async delete(key: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#kv.get(this.name, key);
      if (!entry || entry.value === undefined) return;
      try {
        const revision = await this.#kv.swap(this.name, key, undefined, entry.revision);
        this.#seen({ key, value: undefined, revision });
        return;
      } catch (err) {
        if (!isSharedConflict(err) || attempt + 1 >= DEFAULT_ATTEMPTS) throw err;
        await sleep(Math.random() * Math.min(100, 2 ** attempt));
      }
    }
  }

  watch(listener: (change: SharedChange) => void): () => void {
    const own = (change: SharedChange) => listener(change);
    this.#listeners.add(own);
    return () => void this.#listeners.delete(own);
  }
}

function conflictExhausted(context: string, key: string, attempts: number, last: SharedConflictError): Error {
  return new SharedConflictError(context, key, last.expected, `still conflicting after ${attempts} attempts (too many writers on one key?)`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
