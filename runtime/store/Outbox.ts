/**
 * An actor's outbox: what a committed turn wants published, kept until the bus (or the
 * in-process outlet) acknowledges it, so a crash between commit and publish re-publishes
 * instead of losing speech. Entries are written by the turn's own transaction; the stable
 * entry id lets the receiving side drop a re-publish.
 *
 * Keyed by `[actorId, id]` so an ack is a single delete; each record also carries a
 * per-actor sequence, because ids (turn id + n) need not sort in creation order.
 */
import { ActorRecords } from "./ActorRecords.ts";
import { assertEntryId } from "./keys.ts";
import { nextSequence } from "./sequence.ts";
import { StoreError, type OutboxEntry } from "./types.ts";

/** Checks an entry before any transaction starts, so a bad one is refused with nothing written. */
export function assertOutboxEntry(entry: OutboxEntry): void {
  if (typeof entry !== "object" || entry === null) throw new StoreError(`invalid outbox entry: must be an object, got ${entry === null ? "null" : typeof entry}`);
  assertEntryId("outbox id", entry.id);
  if (typeof entry.target !== "string" || entry.target.length === 0) {
    throw new StoreError(`invalid outbox entry ${JSON.stringify(entry.id)}: target must be a non-empty string`);
  }
  if (!Number.isFinite(entry.createdAt)) throw new StoreError(`invalid outbox entry ${JSON.stringify(entry.id)}: createdAt must be a number`);
}

export class Outbox extends ActorRecords {
  /** Entries not yet acknowledged, oldest first. */
  pending(): OutboxEntry[] {
    return this.all(this.dbs.outbox).sort((a, b) => a.seq - b.seq).map((record) => record.entry);
  }

  /** Inside a turn's transaction. A re-committed id replaces its entry and keeps its place. */
  putInTransaction(entry: OutboxEntry): void {
    const key = [this.actorId, entry.id];
    const seq = this.dbs.outbox.get(key)?.seq ?? nextSequence(this.dbs.meta, this.actorId, "outboxSeq");
    this.dbs.outbox.putSync(key, { seq, entry });
  }

  /** Removes a published entry. Acknowledging an unknown or already acknowledged id is a no-op. */
  ack(id: string): Promise<void> {
    try {
      assertEntryId("outbox id", id);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writer.write(`ackOutbox ${JSON.stringify(id)} for actor ${this.actorId}`, null, () => {
      this.dbs.outbox.removeSync([this.actorId, id]);
    });
  }
}
