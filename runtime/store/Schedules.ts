/**
 * An actor's scheduled events (`scheduleEvent` in Open Souls): kept by id so the scheduler
 * can re-arm them after a restart. A turn may add or cancel schedules in its own commit;
 * the scheduler may also put or delete one on its own (a fired event, a cancellation).
 */
import { ActorRecords } from "./ActorRecords.ts";
import { assertEntryId } from "./keys.ts";
import { StoreError, type ScheduledEntry } from "./types.ts";

/** Checks an entry before any transaction starts. */
export function assertScheduledEntry(entry: ScheduledEntry): void {
  if (typeof entry !== "object" || entry === null) throw new StoreError(`invalid scheduled entry: must be an object, got ${entry === null ? "null" : typeof entry}`);
  assertEntryId("schedule id", entry.id);
  if (!Number.isFinite(entry.at)) throw new StoreError(`invalid scheduled entry ${JSON.stringify(entry.id)}: at must be epoch milliseconds`);
  if (typeof entry.process !== "string" || entry.process.length === 0) {
    throw new StoreError(`invalid scheduled entry ${JSON.stringify(entry.id)}: process must be a non-empty string`);
  }
}

export class Schedules extends ActorRecords {
  /** Every scheduled entry, soonest first (ties by id, so the order is stable). */
  list(): ScheduledEntry[] {
    return this.all(this.dbs.schedules).sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  putInTransaction(entry: ScheduledEntry): void {
    this.dbs.schedules.putSync([this.actorId, entry.id], entry);
  }

  deleteInTransaction(id: string): void {
    this.dbs.schedules.removeSync([this.actorId, id]);
  }

  put(entry: ScheduledEntry): Promise<void> {
    try {
      assertScheduledEntry(entry);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writer.write(`putSchedule ${JSON.stringify(entry.id)} for actor ${this.actorId}`, () => [entry], () => this.putInTransaction(entry));
  }

  /** Deleting an unknown id is a no-op: the schedule may already have fired and been removed. */
  delete(id: string): Promise<void> {
    try {
      assertEntryId("schedule id", id);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writer.write(`deleteSchedule ${JSON.stringify(id)} for actor ${this.actorId}`, null, () => this.deleteInTransaction(id));
  }
}
