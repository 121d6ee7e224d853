/**
 * A generic key/value namespace inside one actor's keyspace, for features that come after
 * the turn loop (user models with versions, per-user notes, caches of embeddings...). Keys
 * are ordered arrays, so `["userModel", userId, version]` lists a user's versions in order
 * and `range({ prefix: ["userModel", userId], reverse: true, limit: 1 })` is the latest.
 *
 * Stored under `[actorId, namespace, ...key]` in the `kv` database: destroying the actor
 * removes its namespaces too, and no namespace can read another's keys.
 */
import type { AtomicWriter } from "./AtomicWriter.ts";
import type { Databases } from "./environment.ts";
import { assertKeyPart, keyParts, prefixRange, type KeyPart, type LmdbKey } from "./keys.ts";
import { StoreError } from "./types.ts";

/** A key inside a namespace: one part, or an ordered array of parts. */
export type KvKey = KeyPart | readonly KeyPart[];

export interface KvEntry<V> {
  /** The key inside the namespace, always as an array. */
  key: KeyPart[];
  value: V;
}

export interface KvRangeOptions {
  /** Every key that starts with these parts (and the key equal to them). */
  prefix?: KvKey;
  /** Lower bound, inclusive; overrides the prefix's lower bound. */
  start?: KvKey;
  /** Upper bound, exclusive; overrides the prefix's upper bound. */
  end?: KvKey;
  limit?: number;
  /** Highest key first. */
  reverse?: boolean;
}

export interface KvNamespace<V = unknown> {
  readonly actorId: string;
  readonly namespace: string;
  /** Synchronous, as every LMDB read. */
  get(key: KvKey): V | undefined;
  /** Resolves once committed; a value msgpack cannot encode rejects with nothing written. */
  put(key: KvKey, value: V): Promise<void>;
  /** Resolves true if the key existed. */
  delete(key: KvKey): Promise<boolean>;
  /** Entries in key order (the whole namespace when no bounds are given). */
  range(options?: KvRangeOptions): KvEntry<V>[];
}

function partsOf(key: KvKey): KeyPart[] {
  const parts = Array.isArray(key) ? [...(key as readonly KeyPart[])] : [key as KeyPart];
  return parts.map(assertKeyPart);
}

export class LmdbKvNamespace<V> implements KvNamespace<V> {
  readonly actorId: string;
  readonly namespace: string;
  readonly #dbs: Databases;
  readonly #writer: AtomicWriter;

  constructor(actorId: string, namespace: string, dbs: Databases, writer: AtomicWriter) {
    this.actorId = actorId;
    this.namespace = namespace;
    this.#dbs = dbs;
    this.#writer = writer;
  }

  #key(key: KvKey): KeyPart[] {
    const parts = partsOf(key);
    if (parts.length === 0) throw new StoreError(`invalid kv key in namespace ${this.namespace}: must have at least one part`);
    return [this.actorId, this.namespace, ...parts];
  }

  get(key: KvKey): V | undefined {
    this.#writer.ensureOpen();
    return this.#dbs.kv.get(this.#key(key)) as V | undefined;
  }

  put(key: KvKey, value: V): Promise<void> {
    let full: KeyPart[];
    try {
      full = this.#key(key);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#writer.write(`kv put in ${this.namespace} for actor ${this.actorId}`, () => [value], () => {
      this.#dbs.kv.putSync(full, value);
    });
  }

  delete(key: KvKey): Promise<boolean> {
    let full: KeyPart[];
    try {
      full = this.#key(key);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#writer.write(`kv delete in ${this.namespace} for actor ${this.actorId}`, null, () => {
      if (!this.#dbs.kv.doesExist(full)) return false;
      this.#dbs.kv.removeSync(full);
      return true;
    });
  }

  range(options: KvRangeOptions = {}): KvEntry<V>[] {
    this.#writer.ensureOpen();
    const base = [this.actorId, this.namespace];
    const prefix = options.prefix === undefined ? [] : partsOf(options.prefix);
    const bounds = prefixRange([...base, ...prefix]);
    const low: LmdbKey = options.start === undefined ? bounds.start : [...base, ...partsOf(options.start)];
    const high: LmdbKey = options.end === undefined ? bounds.end : [...base, ...partsOf(options.end)];
    if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 0)) {
      throw new StoreError(`invalid kv range limit ${options.limit}: must be a non-negative integer`);
    }
    if (options.limit === 0) return [];
    // lmdb-js walks from `start` to `end`, start inclusive and end exclusive, in either
    // direction; reversed, the bounds swap roles and inclusivity so [low, high) still holds.
    const range = options.reverse
      ? { start: high, end: low, exclusiveStart: true, inclusiveEnd: true, reverse: true }
      : { start: low, end: high };
    const entries = this.#dbs.kv.getRange({ ...range, ...(options.limit !== undefined ? { limit: options.limit } : {}) });
    return [...entries].map(({ key, value }) => ({ key: keyParts(key).slice(2), value: value as V }));
  }
}
