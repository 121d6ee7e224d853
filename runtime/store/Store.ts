/**
 * The store of one node: one LMDB environment per data directory, every actor in its own
 * key range. `openStore` is the only way in; reads are synchronous memory-mapped lookups,
 * writes are asynchronous and batched (see AtomicWriter for why each is atomic).
 */
import { AtomicWriter } from "./AtomicWriter.ts";
import { openEnvironment, type StoreEnvironment } from "./environment.ts";
import { assertActorId, keyParts } from "./keys.ts";
import type { KvNamespace } from "./KvNamespace.ts";
import { LmdbActorStoreImpl, type LmdbActorStore } from "./LmdbActorStore.ts";
import type { StoreOptions } from "./types.ts";

export interface Store {
  /** The data directory, absolute. */
  readonly path: string;
  /** The actor's handle; cheap, and the same object for the same id. Throws StoreError on an invalid id. */
  actor(id: string): LmdbActorStore;
  /** Ids of the actors that have a committed state, in key order. */
  actorIds(): string[];
  /** A key/value namespace in the actor's keyspace; same as `actor(actorId).kv(namespace)`. */
  kv<V = unknown>(actorId: string, namespace: string): KvNamespace<V>;
  /** Bytes the data file holds (its high-water mark), to watch against `mapSize`. */
  usedBytes(): number;
  /** Lets queued writes finish, flushes, closes the environment and frees the data directory. Idempotent. */
  close(): Promise<void>;
}

class LmdbStore implements Store {
  readonly #env: StoreEnvironment;
  readonly #writer: AtomicWriter;
  readonly #actors = new Map<string, LmdbActorStore>();

  constructor(env: StoreEnvironment) {
    this.#env = env;
    this.#writer = new AtomicWriter(env);
  }

  get path(): string {
    return this.#env.path;
  }

  actor(id: string): LmdbActorStore {
    const cached = this.#actors.get(id);
    if (cached) return cached;
    this.#writer.ensureOpen();
    const actor = new LmdbActorStoreImpl(assertActorId(id), this.#env.dbs, this.#writer, this.#env.turnLog);
    this.#actors.set(id, actor);
    return actor;
  }

  actorIds(): string[] {
    this.#writer.ensureOpen();
    return [...this.#env.dbs.state.getKeys()].map((key) => String(keyParts(key)[0]));
  }

  kv<V = unknown>(actorId: string, namespace: string): KvNamespace<V> {
    return this.actor(actorId).kv<V>(namespace);
  }

  usedBytes(): number {
    return this.#writer.usedBytes();
  }

  close(): Promise<void> {
    // The directory is free once LMDB is closed, not before: a next holder must find every commit flushed.
    return this.#writer.close().finally(() => this.#env.lock?.release());
  }
}

/**
 * Opens the store in `options.path` (default `./.ensoul`), creating the directory if missing,
 * and takes the directory for this process (unless `options.reader`): a StoreError names the
 * process that holds it already.
 */
export function openStore(options: StoreOptions = {}): Store {
  return new LmdbStore(openEnvironment(options));
}
