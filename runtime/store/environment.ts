/**
 * The LMDB environment of one data directory and its named databases. A node opens one
 * environment and every actor lives in it, in its own key range, so a turn that touches
 * state, inbox, outbox and schedules is still one LMDB transaction.
 *
 * Durability, and why these options:
 *
 * - `overlappingSync` (lmdb-js's default off Windows, kept explicitly): a commit writes its
 *   pages and switches the meta page, releases the write lock, and then fsyncs on the
 *   writer thread while the next transaction already runs. A committed transaction is in
 *   the OS page cache the moment the commit returns, so killing the process (SIGKILL, OOM,
 *   a crash) cannot lose it: on reopen lmdb-js takes the last committed transaction when
 *   the machine has not rebooted. An OS crash or power loss before the fsync finishes can
 *   lose the last few turns; the meta-page protocol then rolls back to the last flushed
 *   turn, whole, never a torn one. `durability: "flush"` closes that window by also awaiting
 *   the fsync (`env.flushed`) before a write resolves, at the cost of the disk's fsync
 *   latency on every turn (still not blocking the event loop or the next commit).
 * - `commitDelay` stays 0: writes queued in one event turn are batched into one
 *   transaction anyway, and any delay would be added to every turn's latency.
 * - `noSync` (tests and benchmarks only): no fsync at all. Commits still reach the page
 *   cache, so even this survives a killed process, but an OS crash can corrupt the file.
 * - No lmdb `cache`: reads are synchronous memory-mapped lookups already, and a cache in
 *   front of them would be one more thing to keep coherent with aborted transactions.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { open, type Database, type Key, type RootDatabase, type RootDatabaseOptionsWithPath } from "lmdb";
import { DEFAULT_TURN_LOG_KEEP, StoreError, type ActorState, type InboxEntry, type OutboxEntry, type ScheduledEntry, type StoreOptions, type TurnLogEntry, type TurnLogOptions } from "./types.ts";
import { DEFAULT_PATH } from "./defaults/index.ts";
import { lockDataDir, type DataDirLock } from "./dataDirLock.ts";

/** An outbox entry with its per-actor creation order, which its id alone does not give. */
export interface StoredOutbox {
  seq: number;
  entry: OutboxEntry;
}

/** The named databases. Each key starts with the actor id (see keys.ts). */
export interface Databases {
  /** `[actorId]` → the last committed state. */
  state: Database<ActorState, Key>;
  /** `[actorId, slot]` → one memory of the actor's working memory; the state record gives the slots' order (see MemoryLog). */
  memories: Database<unknown, Key>;
  /** `[actorId, envelopeId]` → the entry, kept after it is done so a redelivery is recognised. */
  inbox: Database<InboxEntry, Key>;
  /** `[actorId, seq]` → envelope id, for entries not yet done: arrival order without a sort. */
  inboxQueue: Database<string, Key>;
  /** `[actorId, outboxId]` → entry with its creation order; removed when acknowledged. */
  outbox: Database<StoredOutbox, Key>;
  /** `[actorId, scheduleId]` → entry. */
  schedules: Database<ScheduledEntry, Key>;
  /** `[actorId, namespace, ...key]` → value, for features built on the store later. */
  kv: Database<unknown, Key>;
  /** `[actorId, counterName]` → number: per-actor sequences. */
  meta: Database<number, Key>;
  /** `[actorId, turn, k]` → what the turn log keeps of a commit (TurnLog.ts). */
  turns: Database<TurnLogEntry, Key>;
  /** `[actorId, turn, k]` → the turn's trace (prompts, steps, decisions), compressed. */
  turnTraces: Database<unknown, Key>;
}

export interface StoreEnvironment {
  readonly path: string;
  readonly root: RootDatabase;
  readonly dbs: Databases;
  /** The enforced size limit in bytes, or undefined when the map may grow freely. */
  readonly mapSizeLimit: number | undefined;
  readonly durability: "commit" | "flush";
  /** No fsync at all (tests and benchmarks). */
  readonly noSync: boolean;
  /** Opened to read only: writes are refused. */
  readonly reader: boolean;
  /** This process's hold on the data directory (none for a reader); released when the store closes. */
  readonly lock: DataDirLock | undefined;
  /** What each actor's turn log keeps (`keep: 0`: none). */
  readonly turnLog: { keep: number; maxAgeMs?: number };
}

/** The lmdb-js options for a store's environment, shared with the benchmark's raw floor. */
export function lmdbOptions(options: StoreOptions = {}): RootDatabaseOptionsWithPath {
  const path = resolve(options.path ?? DEFAULT_PATH);
  const noSync = options.noSync === true;
  return {
    path,
    // A data directory, even when its name has a dot in it (lmdb-js would take it for a file).
    noSubdir: false,
    maxDbs: 16,
    commitDelay: 0,
    // lmdb-js forces this off under noSync; setting it here documents the choice above.
    overlappingSync: !noSync && process.platform !== "win32",
    noSync,
    ...(options.mapSize !== undefined ? { mapSize: options.mapSize } : {}),
  };
}

function assertTurnLogOptions(options: TurnLogOptions | false | undefined): void {
  if (options === undefined || options === false) return;
  const { keep, maxAgeMs } = options;
  if (keep !== undefined && (!Number.isSafeInteger(keep) || keep < 0)) throw new StoreError(`invalid turnLog.keep ${String(keep)}: must be a whole number, 0 to turn the log off`);
  if (maxAgeMs !== undefined && (!(typeof maxAgeMs === "number") || !(maxAgeMs > 0))) throw new StoreError(`invalid turnLog.maxAgeMs ${String(maxAgeMs)}: must be a positive number of milliseconds`);
}


function turnLogSettings(option: StoreOptions["turnLog"]): { keep: number; maxAgeMs?: number } {
  if (option === false) return { keep: 0 };
  return { keep: option?.keep ?? DEFAULT_TURN_LOG_KEEP, ...(option?.maxAgeMs !== undefined ? { maxAgeMs: option.maxAgeMs } : {}) };
}

function checkOptions(options: StoreOptions): void {
  assertTurnLogOptions(options.turnLog);
  const { mapSize, durability } = options;
  if (mapSize !== undefined && (!Number.isSafeInteger(mapSize) || mapSize < 64 * 1024)) {
    throw new StoreError(`invalid store.mapSize ${String(mapSize)}: must be an integer number of bytes, at least 65536`);
  }
  if (durability !== undefined && durability !== "commit" && durability !== "flush") {
    throw new StoreError(`invalid store.durability ${JSON.stringify(durability)}: must be "commit" or "flush"`);
  }
}

/** Opens (creating if needed) the data directory's environment and its databases. */
export function openEnvironment(options: StoreOptions = {}): StoreEnvironment {
  checkOptions(options);
  const lmdb = lmdbOptions(options);
  const path = lmdb.path as string;
  let root: RootDatabase;
  let lock: DataDirLock | undefined;
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    throw new StoreError(`cannot open LMDB environment at ${path}: ${(error as Error).message}`, { cause: error });
  }
  // Before LMDB opens: a second process must not touch the environment at all.
  if (options.reader !== true) lock = lockDataDir(path);
  try {
    root = open(lmdb);
  } catch (error) {
    lock?.release();
    throw new StoreError(`cannot open LMDB environment at ${path}: ${(error as Error).message}`, { cause: error });
  }
  const dbs: Databases = {
    state: root.openDB<ActorState, Key>({ name: "state" }),
    memories: root.openDB<unknown, Key>({ name: "memories" }),
    inbox: root.openDB<InboxEntry, Key>({ name: "inbox" }),
    inboxQueue: root.openDB<string, Key>({ name: "inboxQueue" }),
    outbox: root.openDB<StoredOutbox, Key>({ name: "outbox" }),
    schedules: root.openDB<ScheduledEntry, Key>({ name: "schedules" }),
    kv: root.openDB<unknown, Key>({ name: "kv" }),
    meta: root.openDB<number, Key>({ name: "meta" }),
    turns: root.openDB<TurnLogEntry, Key>({ name: "turns" }),
    // Prompts repeat the conversation: LZ4 takes most of it back.
    turnTraces: root.openDB<unknown, Key>({ name: "turnTraces", compression: true }),
  };
  return {
    path,
    root,
    dbs,
    mapSizeLimit: options.mapSize,
    durability: options.durability ?? "commit",
    noSync: options.noSync === true,
    reader: options.reader === true,
    lock,
    turnLog: turnLogSettings(options.turnLog),
  };
}
