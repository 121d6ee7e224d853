/**
 * One actor's view of the store: the ActorStore contract over LMDB. A handle is cheap (it
 * holds no LMDB resources of its own), and every method reads or writes only keys that
 * start with this actor's id.
 */
import { assertDoneIds, assertDump, describeExisting, dumpActor, removeActorInTransaction, restoreInTransaction, type ActorDump, type DoneInboxIds } from "./ActorTransfer.ts";
import type { AtomicWriter } from "./AtomicWriter.ts";
import type { Databases } from "./environment.ts";
import { Inbox } from "./Inbox.ts";
import { assertEntryId, assertKeyPart, assertToken } from "./keys.ts";
import { LmdbKvNamespace, type KvNamespace } from "./KvNamespace.ts";
import { MemoryLog } from "./MemoryLog.ts";
import { assertOutboxEntry, Outbox } from "./Outbox.ts";
import { assertScheduledEntry, Schedules } from "./Schedules.ts";
import { TurnHistory } from "./TurnHistory.ts";
import { TurnLog } from "./TurnLog.ts";
import { StoreError, type ActorState, type ActorStore, type InboxEntry, type KvReadEntry, type OutboxEntry, type ScheduledEntry, type TurnCommit } from "./types.ts";

/** ActorStore plus what the LMDB store adds: failed entries, retries, pruning, kv namespaces. */
export interface LmdbActorStore extends ActorStore {
  /** Entries whose processing failed, in arrival order, each with its error and attempts. */
  failedInbox(): InboxEntry[];
  /** Puts a failed entry back among the pending ones, at its original arrival place. */
  retryInbox(id: string): Promise<void>;
  /** Removes done entries received more than `olderThanMs` ago; resolves with how many. */
  pruneInbox(olderThanMs: number): Promise<number>;
  /** A key/value namespace in this actor's keyspace (see KvNamespace). */
  kv<V = unknown>(namespace: string): KvNamespace<V>;
  /**
   * The last committed state without its working memory's memories: one record read, for
   * what only needs the turn, the process or the metadata (a node listing a thousand souls).
   */
  loadStateHeader(): Omit<ActorState, "workingMemory"> | undefined;
  /** Everything a copy of this actor elsewhere needs (see ActorTransfer), read at one instant; undefined when it has no state. */
  dump(): ActorDump | undefined;
  /** The ids of the inbox's done entries (a dump leaves them out): all, when at most `limit`; else the `limit` most recently received. */
  doneInboxIds(limit: number): string[];
  /**
   * Writes a dump as this actor, in one transaction. Refused with a StoreError (nothing
   * written) when the actor has any key here, unless `replace`: then everything it had is
   * removed in the same transaction. With `done`, those ids are recorded as processed
   * perceptions. Resolves with what was replaced, if anything.
   */
  restore(dump: ActorDump, options?: { replace?: boolean; done?: DoneInboxIds }): Promise<{ replaced?: string }>;
  /** The turn log: committed turns read back, and revert (undefined when the store keeps none). */
  readonly history: TurnHistory | undefined;
}

function assertState(actorId: string, state: ActorState): void {
  if (typeof state !== "object" || state === null) throw new StoreError(`commitTurn for actor ${actorId}: state must be an object`);
  if (!Number.isSafeInteger(state.turn) || state.turn < 0) {
    throw new StoreError(`commitTurn for actor ${actorId}: state.turn must be a non-negative integer, got ${String(state.turn)}`);
  }
  if (typeof state.currentProcess !== "string") throw new StoreError(`commitTurn for actor ${actorId}: state.currentProcess must be a string`);
}

/** Every check that needs no transaction, so a malformed commit is refused with nothing written. */
function assertCommit(actorId: string, commit: TurnCommit): void {
  if (typeof commit !== "object" || commit === null) throw new StoreError(`commitTurn for actor ${actorId}: commit must be an object`);
  assertState(actorId, commit.state);
  if (commit.inboxDone !== undefined) assertEntryId("inbox id", commit.inboxDone);
  if (commit.inboxRecord !== undefined) {
    if (commit.inboxDone !== undefined) throw new StoreError(`commitTurn for actor ${actorId}: inboxDone and inboxRecord cannot both be given`);
    assertEntryId("inbox id", commit.inboxRecord.id);
  }
  for (const entry of commit.outbox ?? []) assertOutboxEntry(entry);
  for (const entry of commit.schedulesPut ?? []) assertScheduledEntry(entry);
  for (const id of commit.schedulesDelete ?? []) assertEntryId("schedule id", id);
  for (const write of commit.kv ?? []) {
    assertToken("kv namespace", write.namespace);
    if (!Array.isArray(write.key) || write.key.length === 0) {
      throw new StoreError(`commitTurn for actor ${actorId}: kv key in namespace ${write.namespace} must have at least one part`);
    }
    write.key.forEach(assertKeyPart);
  }
}

export class LmdbActorStoreImpl implements LmdbActorStore {
  readonly actorId: string;
  readonly #dbs: Databases;
  readonly #writer: AtomicWriter;
  readonly #inbox: Inbox;
  readonly #outbox: Outbox;
  readonly #schedules: Schedules;
  readonly #memories: MemoryLog;
  readonly #turnLog: TurnLog;
  readonly history: TurnHistory | undefined;
  /** What a failed commit does to the logs' accounts; made once, not per commit. */
  readonly #forgetLogs = (): void => {
    this.#memories.forget();
    this.#turnLog.forget();
  };

  /** `actorId` must already be valid (Store checks it). */
  constructor(actorId: string, dbs: Databases, writer: AtomicWriter, turnLog: { keep: number; maxAgeMs?: number } = { keep: 0 }) {
    this.actorId = actorId;
    this.#dbs = dbs;
    this.#writer = writer;
    this.#inbox = new Inbox(actorId, dbs, writer);
    this.#outbox = new Outbox(actorId, dbs, writer);
    this.#schedules = new Schedules(actorId, dbs, writer);
    this.#turnLog = new TurnLog(actorId, dbs, turnLog);
    this.#memories = new MemoryLog(actorId, dbs.memories, { retain: () => this.#turnLog.hasEntries() });
    this.history = this.#turnLog.enabled ? new TurnHistory(actorId, dbs, writer, this.#turnLog, this.#memories) : undefined;
  }

  loadState(): ActorState | undefined {
    this.#writer.ensureOpen();
    return this.#memories.load(this.#dbs.state.get([this.actorId]));
  }

  loadStateHeader(): Omit<ActorState, "workingMemory"> | undefined {
    this.#writer.ensureOpen();
    const stored = this.#dbs.state.get([this.actorId]);
    if (!stored) return undefined;
    const { workingMemory: _memories, ...header } = stored;
    return header;
  }

  /**
   * One transaction: state (its working memory as a log, see MemoryLog), inbox entry done,
   * outbox entries, schedule changes. Any throw inside it (an unknown inbox id, a value
   * msgpack cannot encode) aborts all of it.
   */
  commitTurn(commit: TurnCommit): Promise<void> {
    try {
      assertCommit(this.actorId, commit);
    } catch (error) {
      return Promise.reject(error);
    }
    const { state, inboxDone, inboxRecord, outbox = [], schedulesPut = [], schedulesDelete = [], kv = [], log } = commit;
    const logged = log !== undefined && this.#turnLog.enabled ? log : undefined;
    const sizes = (): unknown[] => [
      { ...state, workingMemory: undefined },
      ...this.#memories.changed(state),
      ...outbox,
      ...schedulesPut,
      ...kv.map((w) => w.value),
      inboxDone === undefined ? undefined : this.#inbox.entry(inboxDone),
      inboxRecord?.perception,
      logged?.trace,
    ];
    const committing = this.#writer.write(`commitTurn ${state.turn} for actor ${this.actorId}`, sizes, () => {
      const { record, written } = this.#memories.writeInTransaction(state, () => this.#dbs.state.get([this.actorId]));
      this.#dbs.state.putSync([this.actorId], record);
      if (inboxDone !== undefined) this.#inbox.markDoneInTransaction(inboxDone);
      if (inboxRecord !== undefined) this.#inbox.recordDoneInTransaction(inboxRecord.id, inboxRecord.perception);
      for (const entry of outbox) this.#outbox.putInTransaction(entry);
      for (const entry of schedulesPut) this.#schedules.putInTransaction(entry);
      for (const id of schedulesDelete) this.#schedules.deleteInTransaction(id);
      const priors = logged ? this.#turnLog.priorsOf(kv) : [];
      for (const write of kv) this.#dbs.kv.putSync([this.actorId, write.namespace, ...write.key], write.value);
      if (logged) this.#turnLog.appendInTransaction(logged.kind, record, priors, logged.trace, logged.at);
      written();
    });
    // A batch can fail after this body ran: then the logs are read back before the next write.
    committing.catch(this.#forgetLogs);
    return committing;
  }

  receive(id: string, perception: unknown): Promise<boolean> {
    return this.#inbox.receive(id, perception);
  }

  markError(id: string, error: string): Promise<void> {
    return this.#inbox.markError(id, error);
  }

  retryInbox(id: string): Promise<void> {
    return this.#inbox.retry(id);
  }

  inboxEntry(id: string): InboxEntry | undefined {
    return this.#inbox.entry(id);
  }

  pendingInbox(): InboxEntry[] {
    return this.#inbox.pending();
  }

  failedInbox(): InboxEntry[] {
    return this.#inbox.failed();
  }

  pruneInbox(olderThanMs: number): Promise<number> {
    return this.#inbox.prune(olderThanMs);
  }

  pendingOutbox(): OutboxEntry[] {
    return this.#outbox.pending();
  }

  ackOutbox(id: string): Promise<void> {
    return this.#outbox.ack(id);
  }

  schedules(): ScheduledEntry[] {
    return this.#schedules.list();
  }

  putSchedule(entry: ScheduledEntry): Promise<void> {
    return this.#schedules.put(entry);
  }

  deleteSchedule(id: string): Promise<void> {
    return this.#schedules.delete(id);
  }

  kv<V = unknown>(namespace: string): KvNamespace<V> {
    return new LmdbKvNamespace<V>(this.actorId, assertToken("kv namespace", namespace), this.#dbs, this.#writer);
  }

  kvRange(namespace: string, prefix: (string | number)[]): KvReadEntry[] {
    return this.kv(namespace).range({ prefix });
  }

  dump(): ActorDump | undefined {
    this.#writer.ensureOpen();
    return dumpActor(this.actorId, this.#dbs, this.#memories);
  }

  doneInboxIds(limit: number): string[] {
    return this.#inbox.doneIds(limit);
  }

  restore(dump: ActorDump, options: { replace?: boolean; done?: DoneInboxIds } = {}): Promise<{ replaced?: string }> {
    let done: DoneInboxIds | undefined;
    try {
      assertDump(this.actorId, dump);
      if (options.done) done = { ids: assertDoneIds(this.actorId, dump, options.done), at: options.done.at };
    } catch (error) {
      return Promise.reject(error);
    }
    const wm = dump.state.workingMemory as { memories?: unknown[] } | undefined;
    const sizes = (): unknown[] => [
      { ...dump.state, workingMemory: undefined },
      ...(Array.isArray(wm?.memories) ? wm.memories : []),
      ...dump.inbox,
      ...dump.outbox,
      ...dump.schedules,
      ...dump.kv.map((e) => e.value),
    ];
    // The logs' accounts are of what this actor had: the restore starts them over.
    this.#memories.forget();
    this.#turnLog.forget();
    const restoring = this.#writer.write(`restore actor ${this.actorId}`, sizes, () => {
      const existing = describeExisting(this.actorId, this.#dbs);
      if (existing !== undefined && options.replace !== true) {
        throw new StoreError(`actor ${this.actorId} already has data in this store (${existing}); refusing to overwrite it`);
      }
      if (existing !== undefined) removeActorInTransaction(this.actorId, this.#dbs);
      restoreInTransaction(this.actorId, this.#dbs, this.#memories, dump, done);
      return existing === undefined ? {} : { replaced: existing };
    });
    restoring.catch(() => this.#memories.forget());
    return restoring;
  }

  /** Removes every key of this actor from every database, in one transaction. */
  destroy(): Promise<void> {
    this.#memories.forget();
    this.#turnLog.forget();
    return this.#writer.write(`destroy actor ${this.actorId}`, null, () => removeActorInTransaction(this.actorId, this.#dbs));
  }
}
