/**
 * What the inbox, outbox and schedules have in common: each is one actor's records in the
 * store's databases, all keyed `[actorId, ...]` (see keys.ts), written through the store's
 * one writer. An actor's records in a database are the range under its id.
 */
import type { Database, Key, RangeIterable } from "lmdb";
import type { AtomicWriter } from "./AtomicWriter.ts";
import type { Databases } from "./environment.ts";
import { prefixRange } from "./keys.ts";

export abstract class ActorRecords {
  protected readonly actorId: string;
  protected readonly dbs: Databases;
  protected readonly writer: AtomicWriter;

  constructor(actorId: string, dbs: Databases, writer: AtomicWriter) {
    this.actorId = actorId;
    this.dbs = dbs;
    this.writer = writer;
  }

  /** This actor's values in `db`, in key order, read lazily. No open check: write bodies use it too. */
  protected values<V>(db: Database<V, Key>): RangeIterable<V> {
    return db.getRange(prefixRange([this.actorId])).map(({ value }) => value);
  }

  /** This actor's values in `db`, in key order; throws a StoreError once the store is closed. */
  protected all<V>(db: Database<V, Key>): V[] {
    this.writer.ensureOpen();
    return [...this.values(db)];
  }
}
