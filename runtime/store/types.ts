/**
 * What an actor keeps in LMDB. The store knows the shape of an actor's durable state but
 * not what a soul does with it: the soul runtime decides what a turn means, the store
 * makes it atomic and durable.
 */

/** Working memory in its plain-data form (see runtime/cognition WorkingMemory.toJSON). */
export type SerializedMemory = unknown;

/** An actor's state at a turn boundary: everything needed to continue exactly there. */
export interface ActorState {
  /** Serialised WorkingMemory after the last committed turn. */
  workingMemory: SerializedMemory;
  /** `useSoulMemory` values, by name. */
  soulMemory: Record<string, unknown>;
  /** `useProcessMemory` slots, by process name, in call order. */
  processMemory: Record<string, unknown[]>;
  currentProcess: string;
  previousProcess?: string;
  /** How many times each process has been invoked. */
  invocationCounts: Record<string, number>;
  /** Number of committed turns. */
  turn: number;
  /** The XState persisted snapshot taken at this turn boundary. */
  snapshot?: unknown;
  /** User-facing metadata (display name, bridge bindings, ...). */
  metadata?: Record<string, unknown>;
}

export type InboxStatus = "pending" | "done" | "error";

export interface InboxEntry {
  /** The envelope id; the inbox key, so a redelivered envelope is recognised. */
  id: string;
  /** The perception as received (plain data). */
  perception: unknown;
  status: InboxStatus;
  /** Why processing failed, when status is `error`. */
  error?: string;
  attempts: number;
  receivedAt: number;
  /** Arrival order: pending entries are replayed in this order. */
  seq: number;
}

export interface ScheduledEntry {
  id: string;
  /** Epoch milliseconds when it fires. */
  at: number;
  process: string;
  perception: unknown;
  params?: Record<string, unknown>;
}

export interface OutboxEntry {
  /** Stable id (turn id + sequence), so a re-publish after a crash is deduplicated. */
  id: string;
  /** Where it goes (a bus subject, or an outlet name in-process). */
  target: string;
  payload: unknown;
  createdAt: number;
}

/** Everything one turn writes. `commitTurn` applies all of it in one LMDB transaction. */
export interface TurnCommit {
  state: ActorState;
  /** Inbox entry this turn processed, marked done in the same transaction. */
  inboxDone?: string;
  /**
   * A perception this turn processed that no `receive` recorded, because its source kept it
   * until acknowledged (the node's JetStream consumer): recorded here, done, in the same
   * transaction, so a redelivery is still recognised. If `receive` recorded it meanwhile,
   * that entry is marked done instead. Not together with `inboxDone`.
   */
  inboxRecord?: InboxRecord;
  outbox?: OutboxEntry[];
  schedulesPut?: ScheduledEntry[];
  schedulesDelete?: string[];
  /**
   * Key/value writes in this actor's namespaces (`kv(namespace)`), e.g. a user-model version
   * a process saved during the turn: they land with the turn or not at all.
   */
  kv?: KvWrite[];
  /**
   * Keep this commit in the turn log (TurnLog.ts), when the store keeps one: a turn's commit
   * (`turn`) or what its subprocesses committed after it (`subprocess`), with its trace.
   */
  log?: { kind: "turn" | "subprocess"; at: number; trace?: unknown };
}

export interface InboxRecord {
  id: string;
  perception: unknown;
}

/** One write into an actor's key/value namespace, applied by `commitTurn`. */
export interface KvWrite {
  namespace: string;
  key: (string | number)[];
  value: unknown;
}

/** One committed key/value entry, as `ActorStore.kvRange` returns it. */
export interface KvReadEntry {
  key: (string | number)[];
  value: unknown;
}

export interface ActorStore {
  readonly actorId: string;
  /** The last committed state, or undefined for a new actor. Synchronous, as LMDB reads are. */
  loadState(): ActorState | undefined;
  /** Applies the whole turn atomically; resolves when it is durable (as `StoreOptions.durability` defines). */
  commitTurn(commit: TurnCommit): Promise<void>;

  /**
   * Records an arriving perception. Returns false (and writes nothing) when an entry with
   * this id already exists, so a redelivery is dropped.
   */
  receive(id: string, perception: unknown): Promise<boolean>;
  /** Leaves the entry in the inbox with its error, never dropped. */
  markError(id: string, error: string): Promise<void>;
  inboxEntry(id: string): InboxEntry | undefined;
  /** Entries still to process, in arrival order. */
  pendingInbox(): InboxEntry[];

  pendingOutbox(): OutboxEntry[];
  ackOutbox(id: string): Promise<void>;

  schedules(): ScheduledEntry[];
  putSchedule(entry: ScheduledEntry): Promise<void>;
  deleteSchedule(id: string): Promise<void>;

  /**
   * Committed entries of a key/value namespace whose key starts with `prefix`, in key order
   * (what `commitTurn`'s `kv` writes). Optional: a store without namespaces has none.
   */
  kvRange?(namespace: string, prefix: (string | number)[]): KvReadEntry[];

  /** Removes every key of this actor. */
  destroy(): Promise<void>;

  /** The turn log (committed turns read back, revert), when the store keeps one. */
  readonly history?: ActorHistory | undefined;
}

export interface StoreOptions {
  /** Data directory; default `./.ensoul`. */
  path?: string;
  /**
   * LMDB map size in bytes: the most the data file may hold. lmdb-js would otherwise grow
   * the map on demand, so when this is set the store enforces it and refuses, with a
   * StoreError and nothing written, a write that could take the file past it. Unset, the
   * map grows as needed and only the disk limits it.
   */
  mapSize?: number;
  /** Trade durability for speed in tests and benchmarks (no fsync). */
  noSync?: boolean;
  /**
   * Open to read only, without taking the data directory: for a command that looks at a
   * directory a running node holds (`ensoul memory`). Every write through it is refused.
   * Without it, the store takes the directory for this process (dataDirLock.ts), and a
   * second process that tries gets a StoreError naming the holder.
   */
  reader?: boolean;
  /**
   * When writes resolve. `"commit"` (default): once the transaction is committed, which
   * survives the process being killed; the fsync follows at once, off the write lock.
   * `"flush"`: also wait for that fsync, so a resolved turn survives power loss too.
   * See runtime/store/environment.ts for the trade-off.
   */
  durability?: "commit" | "flush";
  /**
   * How many committed turns each actor keeps reachable for a revert and the debugger's
   * timeline (TurnLog.ts): default `{ keep: 100 }`; `false` or `{ keep: 0 }` keeps none.
   */
  turnLog?: TurnLogOptions | false;
}

export class StoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreError";
  }
}

/** The turn a revert or a read asked for is not in the turn log (never committed, or pruned). */
export class TurnNotKeptError extends StoreError {
  constructor(message: string) {
    super(message);
    this.name = "TurnNotKeptError";
  }
}

// ---- the turn log (TurnLog.ts, TurnHistory.ts) ---------------------------------------

export interface TurnLogOptions {
  /** Turn numbers kept (default 100); 0 turns the log off. The latest is always kept. */
  keep?: number;
  /** Entries older than this are dropped at the next prune (the latest is always kept). */
  maxAgeMs?: number;
}

export const DEFAULT_TURN_LOG_KEEP = 100;

export type TurnLogKind = "turn" | "subprocess" | "revert";

/** A key/value write of the turn, with the value it replaced (`had: false`: there was none). */
export interface LoggedKvWrite extends KvWrite {
  had: boolean;
  prior?: unknown;
}

/** What the log keeps of one commit. */
export interface TurnLogEntry {
  kind: TurnLogKind;
  turn: number;
  /** Epoch ms of the commit. */
  at: number;
  /** The state record as written: the working memory as slot runs (MemoryLog). */
  state: ActorState;
  schedules: ScheduledEntry[];
  kv: LoggedKvWrite[];
  /** For a revert: which turn it went back to, and who asked. */
  revert?: { toTurn: number; by: string };
}

/** A logged commit read back: its state with the working memory's memories, and the memories before it. */
export interface LoggedTurn {
  kind: TurnLogKind;
  turn: number;
  /** Orders the entries of one turn number: 0 is the turn, then its subprocesses and reverts. */
  k: number;
  at: number;
  state: ActorState;
  /** The memories before this commit; null when the entry before it is no longer kept. */
  memoriesBefore: unknown[] | null;
  schedules: ScheduledEntry[];
  kv: KvWrite[];
  trace?: unknown;
  revert?: { toTurn: number; by: string };
}

export interface RevertOutcome {
  /** The turn current when the revert was made (the next turn is this + 1). */
  turn: number;
  toTurn: number;
  by: string;
  at: number;
}

/** One actor's turn log: committed turns read back, and a revert to one (TurnHistory.ts). */
export interface ActorHistory {
  /** Turn numbers kept at most. */
  readonly keep: number;
  /** Oldest and newest turn numbers kept. */
  bounds(): { oldest?: number; newest?: number };
  /** Logged commits of at most `limit` turn numbers below `before`, newest first (`memories: false`: without working memory). */
  page(limit: number, before?: number, options?: { memories?: boolean }): LoggedTurn[];
  /** Rolls the actor back to the state after turn `toTurn`; a TurnNotKeptError when it is not in the log. */
  revertTo(toTurn: number, by: string, at: number): Promise<RevertOutcome>;
}
