/**
 * Enforces `store.mapSize` as a hard limit.
 *
 * Upstream LMDB fails a write with MDB_MAP_FULL when the map is full, but lmdb-js patches
 * LMDB to grow the map instead, so a configured size would silently mean nothing. The store
 * therefore checks before each write: the file's high-water mark (last page in use) plus a
 * worst-case estimate of the pages the write may add, plus what writes already in flight
 * have reserved, must stay within the limit. A write that does not fit is refused before
 * its transaction starts, so nothing of it is written.
 *
 * The estimate is deliberately pessimistic (copy-on-write of a root-to-leaf path for every
 * write, overflow pages for big values, a few pages for LMDB's own bookkeeping) and ignores
 * free pages LMDB would reuse, so "full" means "within one worst-case write of the limit".
 * Deletes are never refused: they are how a full store is made room in.
 */
import { pack } from "msgpackr";
import type { RootDatabase } from "lmdb";
import { mapFullError } from "./lmdbErrors.ts";

/** Pages a single put may copy or add: a B-tree path (depth ≤ 4 for any realistic store). */
const PAGES_PER_WRITE = 4;
/** Per transaction: the database catalog, the free list, a split or two. */
const PAGES_PER_TXN = 8;
/** Key, node header and alignment, generously. */
const BYTES_PER_ENTRY_OVERHEAD = 512;

interface EnvStats {
  pageSize: number;
  lastPageNumber: number;
}

export class MapLimit {
  readonly #root: RootDatabase;
  readonly #path: string;
  /** The limit in bytes; undefined disables every check (the map grows as needed). */
  readonly limit: number | undefined;
  #reserved = 0;

  constructor(root: RootDatabase, path: string, limit: number | undefined) {
    this.#root = root;
    this.#path = path;
    this.limit = limit;
  }

  get enabled(): boolean {
    return this.limit !== undefined;
  }

  /** Bytes the data file uses now: its high-water mark, which copy-on-write never lowers. */
  usedBytes(): number {
    const stats = this.#root.getStats() as EnvStats;
    return (stats.lastPageNumber + 1) * stats.pageSize;
  }

  /**
   * Reserves room for a write of `values`, or throws the map-full StoreError. Returns the
   * reservation to hand back to `release` when the write has finished (committed or not).
   */
  reserve(values: readonly unknown[]): number {
    if (this.limit === undefined) return 0;
    const { pageSize } = this.#root.getStats() as EnvStats;
    let need = PAGES_PER_TXN * pageSize;
    for (const value of values) {
      const bytes = encodedSize(value) + BYTES_PER_ENTRY_OVERHEAD;
      // Values over half a page go to overflow pages of their own.
      const dataPages = bytes > pageSize / 2 ? Math.ceil(bytes / pageSize) : 1;
      need += (dataPages + PAGES_PER_WRITE) * pageSize;
    }
    if (this.usedBytes() + this.#reserved + need > this.limit) throw mapFullError(this.#path, this.limit);
    this.#reserved += need;
    return need;
  }

  release(reservation: number): void {
    this.#reserved -= reservation;
  }
}

/**
 * The value's msgpack size. A value msgpack cannot encode counts as empty here: the write
 * itself will then fail inside its transaction and roll back with the real error.
 */
function encodedSize(value: unknown): number {
  try {
    return pack(value).length;
  } catch {
    return 0;
  }
}
