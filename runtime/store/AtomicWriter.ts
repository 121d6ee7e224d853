/**
 * The one way the store writes: a function run inside one LMDB transaction that either
 * commits whole or leaves no trace.
 *
 * Why `childTransaction`, and not `transaction` or `transactionSync`:
 *
 * - lmdb-js's `transaction(fn)` runs `fn` inside the current asynchronous write batch,
 *   shared with every other write queued in the same event turn. If `fn` throws halfway,
 *   the promise rejects but the puts it already made stay in the batch and are committed
 *   (lmdb-js issue #115). A turn whose outbox payload fails to encode would then commit its
 *   new state without its outbox: exactly the torn turn this layer exists to prevent.
 * - `childTransaction(fn)` runs `fn` in a nested LMDB transaction (mdb_txn_begin with the
 *   batch as parent) on the main thread while the writer thread holds the write lock.
 *   A throw aborts the child, and with it every put `fn` made; otherwise the child is
 *   merged into the batch, which LMDB commits atomically (one meta-page switch). Reads
 *   inside `fn` see the write transaction, and LMDB has a single writer, so a
 *   read-check-write inside `fn` (inbox dedupe, sequence counters) cannot race another
 *   write from this process or from another process on the same directory.
 * - `transactionSync(fn)` is atomic too, but it holds the event loop for the commit and
 *   (without overlapping sync) for the fsync; every soul on the node would stall behind
 *   one soul's disk write. The asynchronous path batches concurrent turns into one commit
 *   and keeps the fsync off the main thread.
 *
 * Except under `noSync`, for a write that comes alone: with no fsync, a commit is a few page
 * writes into the page cache (about 20 µs for a turn), while handing it to the writer thread
 * and hearing back costs about 150 µs. So a write made when no other is in flight, and none
 * was made synchronously in this event turn, is a `transactionSync`: still one atomic
 * transaction that a throw aborts, and still in call order, as nothing is queued before it.
 * Writes that come together (many souls' turns at once) still go to the writer thread,
 * which commits them as one transaction: there batching wins.
 */
import type { RootDatabase } from "lmdb";
import type { StoreEnvironment } from "./environment.ts";
import { translateError } from "./lmdbErrors.ts";
import { MapLimit } from "./MapLimit.ts";
import { StoreError } from "./types.ts";

interface EnvInfo {
  mapSize: number;
}

export class AtomicWriter {
  readonly #root: RootDatabase;
  readonly #path: string;
  readonly #flush: boolean;
  readonly #sync: boolean;
  readonly #reader: boolean;
  /** A write was committed synchronously in this event turn: the next ones batch. */
  #syncedThisTurn = false;
  readonly #limit: MapLimit;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(env: StoreEnvironment) {
    this.#root = env.root;
    this.#path = env.path;
    this.#flush = env.durability === "flush";
    this.#sync = env.noSync;
    this.#reader = env.reader;
    this.#limit = new MapLimit(env.root, env.path, env.mapSizeLimit);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws a StoreError once the store is closed, for reads as well as writes. */
  ensureOpen(): void {
    if (this.#closed) throw new StoreError(`the store at ${this.#path} is closed`);
  }

  /**
   * Runs `body` atomically and resolves with its result once committed (and flushed, under
   * `durability: "flush"`). `values` lists what the body will put, for the map-size check
   * (called only when a mapSize is set); `null` marks a write that only removes and so is
   * never refused for space.
   * A failure of any kind, including a value msgpack cannot encode, rejects with a
   * StoreError and writes nothing.
   */
  write<T>(what: string, values: (() => readonly unknown[]) | null, body: () => T): Promise<T> {
    let reservation = 0;
    let queued: Promise<T>;
    if (this.#reader) return Promise.reject(new StoreError(`the store at ${this.#path} is opened to read only; refused: ${what}`));
    try {
      this.ensureOpen();
      if (values !== null && this.#limit.enabled) reservation = this.#limit.reserve(values());
      if (this.#sync && this.#inFlight.size === 0 && !this.#syncedThisTurn) {
        this.#syncedThisTurn = true;
        setImmediate(() => (this.#syncedThisTurn = false));
        const result = this.#root.transactionSync(body);
        this.#limit.release(reservation);
        return Promise.resolve(result);
      }
      // Queued synchronously, so writes reach LMDB in call order.
      queued = this.#root.childTransaction(body);
    } catch (error) {
      this.#limit.release(reservation);
      return Promise.reject(translateError(error, what, this.#path, () => this.#mapSize()));
    }
    const done = this.#settle(queued, what, reservation);
    this.#inFlight.add(done);
    const forget = (): void => void this.#inFlight.delete(done);
    done.then(forget, forget);
    return done;
  }

  async #settle<T>(queued: Promise<T>, what: string, reservation: number): Promise<T> {
    try {
      const result = await queued;
      if (this.#flush) await this.#root.flushed;
      return result;
    } catch (error) {
      throw translateError(error, what, this.#path, () => this.#mapSize());
    } finally {
      this.#limit.release(reservation);
    }
  }

  /** Bytes the data file uses (its high-water mark). */
  usedBytes(): number {
    this.ensureOpen();
    return this.#limit.usedBytes();
  }

  #mapSize(): number {
    if (this.#limit.limit !== undefined) return this.#limit.limit;
    try {
      return (this.#root.getStats() as EnvInfo).mapSize;
    } catch {
      return Number.NaN;
    }
  }

  /** Refuses new writes, lets those already queued finish, flushes, then closes LMDB. Every call gets the same promise. */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#inFlight]);
      await this.#root.flushed;
      await this.#root.close();
    })();
    return this.#closing;
  }
}
