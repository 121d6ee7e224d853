/**
 * An actor's inbox: every perception is recorded, keyed by envelope id, before the actor
 * sees it. Entries move pending → done (in the turn's commit) or pending → error (kept,
 * with the error, never dropped). Done entries stay by default, so an envelope redelivered
 * after it was processed is still recognised; `prune` removes old ones when asked.
 *
 * Two databases: `inbox` holds the entries by `[actorId, id]`; `inboxQueue` indexes the
 * entries not yet done by `[actorId, seq]`, so listing pending work in arrival order is a
 * range scan over that work alone, however many done entries the actor has kept.
 */
import { ActorRecords } from "./ActorRecords.ts";
import { assertEntryId, keyParts, prefixRange } from "./keys.ts";
import { nextSequence } from "./sequence.ts";
import { StoreError, type InboxEntry } from "./types.ts";

export class Inbox extends ActorRecords {
  #key(id: string): [string, string] {
    return [this.actorId, id];
  }

  /**
   * Records a perception; false (and nothing written) if the id is already known. The
   * existence check runs inside the write transaction, so of two concurrent receives of
   * one id exactly one wins. `ifNoExists` alone could not do this: the arrival sequence is
   * a read-increment-write that must happen in the same transaction as the check.
   */
  receive(id: string, perception: unknown): Promise<boolean> {
    try {
      assertEntryId("inbox id", id);
    } catch (error) {
      return Promise.reject(error);
    }
    const { inbox, inboxQueue, meta } = this.dbs;
    const key = this.#key(id);
    return this.writer.write(`receive ${JSON.stringify(id)} for actor ${this.actorId}`, () => [perception], () => {
      if (inbox.doesExist(key)) return false;
      const seq = nextSequence(meta, this.actorId, "inboxSeq");
      const entry: InboxEntry = { id, perception, status: "pending", attempts: 0, receivedAt: Date.now(), seq };
      inbox.putSync(key, entry);
      inboxQueue.putSync([this.actorId, seq], id);
      return true;
    });
  }

  /** The entry, whatever its status. */
  entry(id: string): InboxEntry | undefined {
    this.writer.ensureOpen();
    return this.dbs.inbox.get(this.#key(assertEntryId("inbox id", id)));
  }

  /** Entries still to process, in arrival order. */
  pending(): InboxEntry[] {
    return this.#queued("pending");
  }

  /** Entries whose processing failed, in arrival order, with their errors. */
  failed(): InboxEntry[] {
    return this.#queued("error");
  }

  #queued(status: "pending" | "error"): InboxEntry[] {
    this.writer.ensureOpen();
    const out: InboxEntry[] = [];
    for (const id of this.values(this.dbs.inboxQueue)) {
      const entry = this.dbs.inbox.get(this.#key(id));
      if (entry?.status === status) out.push(entry);
    }
    return out;
  }

  /**
   * The ids of done entries: what a copy elsewhere needs to recognise a perception this actor
   * already processed (failover's snapshots carry them). All of them, in key order, when there
   * are at most `limit`: read from the keys alone. Else the `limit` most recently received,
   * newest first: every entry is read to tell.
   */
  doneIds(limit: number): string[] {
    this.writer.ensureOpen();
    const queued = new Set(this.values(this.dbs.inboxQueue));
    // Within the limit every done entry goes, and the keys alone say which: no entry is decoded.
    // (A fresh range each time: lmdb's getKeysCount writes into the options it is given.)
    if (this.dbs.inbox.getKeysCount(prefixRange([this.actorId])) - queued.size <= limit) {
      const ids: string[] = [];
      for (const key of this.dbs.inbox.getKeys(prefixRange([this.actorId]))) {
        const id = String(keyParts(key)[1]);
        if (!queued.has(id)) ids.push(id);
      }
      return ids;
    }
    const done: { id: string; receivedAt: number; seq: number }[] = [];
    for (const entry of this.values(this.dbs.inbox)) {
      if (entry.status === "done") done.push({ id: entry.id, receivedAt: entry.receivedAt, seq: entry.seq });
    }
    done.sort((a, b) => b.receivedAt - a.receivedAt || b.seq - a.seq);
    return done.slice(0, Math.max(0, limit)).map((e) => e.id);
  }

  /** Marks the entry failed: one more attempt, the error kept. It stays in the inbox. */
  markError(id: string, error: string): Promise<void> {
    return this.#update(id, "markError", (entry) => {
      if (entry.status === "done") throw new StoreError(`markError: inbox entry ${JSON.stringify(id)} of actor ${this.actorId} is already done`);
      return { ...entry, status: "error", error: String(error), attempts: entry.attempts + 1 };
    });
  }

  /** Puts a failed entry back in line, at its original place in arrival order. */
  retry(id: string): Promise<void> {
    return this.#update(id, "retryInbox", (entry) => {
      if (entry.status === "done") throw new StoreError(`retryInbox: inbox entry ${JSON.stringify(id)} of actor ${this.actorId} is already done`);
      const { error: _dropped, ...rest } = entry;
      return { ...rest, status: "pending" };
    });
  }

  #update(id: string, what: string, change: (entry: InboxEntry) => InboxEntry): Promise<void> {
    try {
      assertEntryId("inbox id", id);
    } catch (error) {
      return Promise.reject(error);
    }
    const key = this.#key(id);
    return this.writer.write(`${what} ${JSON.stringify(id)} for actor ${this.actorId}`, () => [this.dbs.inbox.get(key)], () => {
      this.dbs.inbox.putSync(key, change(this.#existing(id, what)));
    });
  }

  #existing(id: string, what: string): InboxEntry {
    const entry = this.dbs.inbox.get(this.#key(id));
    if (!entry) throw new StoreError(`${what}: no inbox entry ${JSON.stringify(id)} for actor ${this.actorId}`);
    return entry;
  }

  /** Inside a turn's transaction: marks the processed entry done and takes it out of the queue. */
  markDoneInTransaction(id: string): void {
    const entry = this.#existing(id, "commitTurn");
    this.dbs.inbox.putSync(this.#key(id), { ...entry, status: "done", attempts: entry.attempts + 1 });
    this.dbs.inboxQueue.removeSync([this.actorId, entry.seq]);
  }

  /**
   * Inside a turn's transaction: records a perception that never went through `receive`, as
   * done; if `receive` did record it meanwhile, marks that entry done instead.
   */
  recordDoneInTransaction(id: string, perception: unknown): void {
    if (this.dbs.inbox.doesExist(this.#key(id))) {
      const entry = this.#existing(id, "commitTurn");
      if (entry.status !== "done") this.markDoneInTransaction(id);
      return;
    }
    const seq = nextSequence(this.dbs.meta, this.actorId, "inboxSeq");
    const entry: InboxEntry = { id, perception, status: "done", attempts: 1, receivedAt: Date.now(), seq };
    this.dbs.inbox.putSync(this.#key(id), entry);
  }

  /**
   * Removes done entries that arrived more than `olderThanMs` ago; returns how many. After
   * this, a redelivery of a removed id would be processed again, so keep the window longer
   * than any redelivery can take.
   */
  prune(olderThanMs: number, now = Date.now()): Promise<number> {
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) {
      return Promise.reject(new StoreError(`pruneInbox: olderThanMs must be a non-negative number, got ${olderThanMs}`));
    }
    const cutoff = now - olderThanMs;
    return this.writer.write(`pruneInbox for actor ${this.actorId}`, null, () => {
      const old: string[] = [];
      for (const value of this.values(this.dbs.inbox)) {
        if (value.status === "done" && value.receivedAt < cutoff) old.push(value.id);
      }
      for (const id of old) this.dbs.inbox.removeSync(this.#key(id));
      return old.length;
    });
  }
}
