/**
 * A soul's store under failover: the local LMDB actor store, with every committed turn also
 * appended to the soul's replicated history (historyRecord.ts) before `commitTurn` resolves.
 * The soul publishes its speech and its source acknowledges the perception only after that,
 * so a turn whose effects anyone saw is in the history, on every replica.
 *
 * The order is the issue's: the local commit first (LMDB stays the fast local copy and the
 * turn's own record of where the copy stands lands in the same transaction), then the append,
 * fenced on the soul's last sequence and sent until it lands (recordAppender.ts): `commitTurn`
 * resolves only once the turn is in both, and the next turn is the next record. A turn too
 * large to replicate is refused before the local commit. A fenced append means another node
 * owns the soul now: the turn fails, nothing is said, `onFenced` is told, and every later
 * commit is refused. The local copy is then one turn ahead of the history (as it is when the
 * node stops while an append waits for NATS); the next node to open the soul here sees that
 * its mark differs from the history's and rebuilds it (openReplicatedSoul.ts).
 *
 * Every `compaction.every` records after the last snapshot, the store writes a new snapshot
 * in line with the commits, after the commit that reached the count has resolved (so it does
 * not delay that commit); the records before it go as it lands, in the same fenced step
 * (historyCompaction.ts).
 *
 * What is not replicated, on purpose: inbox arrivals and errors (the perception stream keeps
 * perceptions until a turn's commit acknowledges them, and a failed one is retried there),
 * and schedules put or deleted outside a turn (a restored schedule fires again, as after a
 * crash).
 */
import { assertHistoryRecordSize, HistoryCompactionTooLargeError, type SoulHistoryLog } from "../../bus/index.ts";
import type { ActorStore, LmdbActorStore, TurnCommit } from "../../store/index.ts";
import { snapshotRecord, type CompactionOptions } from "./historyCompaction.ts";
import { encodeRecord, REPLICA_KEY, REPLICA_NAMESPACE, type HistoryRecord, type RecordOwner, type ReplicaMark } from "./historyRecord.ts";
import { memoriesOf, memoryDelta, withoutMemories } from "./memoryDelta.ts";
import { RecordAppender, type AppendHow, type AppenderHooks, type ReplicaPosition } from "./recordAppender.ts";

/** How long acknowledged speech waits for a next turn to carry it to the history. */
const ACK_FLUSH_MS = 1_000;

export interface ReplicatedStoreHooks extends AppenderHooks {
  /** How often the store compacts its history (default: never). */
  compaction?: CompactionOptions;
}

export class ReplicatedActorStore implements ActorStore {
  readonly actorId: string;
  readonly #appender: RecordAppender;
  private readonly compaction: CompactionOptions;
  #acked: string[] = [];
  /** Commits append in order: one at a time per soul. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly local: LmdbActorStore,
    private readonly log: SoulHistoryLog,
    readonly owner: RecordOwner,
    position: ReplicaPosition,
    hooks: ReplicatedStoreHooks,
  ) {
    this.actorId = local.actorId;
    this.#appender = new RecordAppender(local.actorId, owner, log, position, hooks);
    this.compaction = hooks.compaction ?? { every: 0 };
    this.#sinceSnapshot = position.sinceSnapshot ?? 0;
  }
  #sinceSnapshot: number;
  #compactionQueued = false;
  /**
   * The memories of the last turn record this store appended: the next turn's delta is from
   * them (memoryDelta.ts). Held weakly, as the memory log holds them: a live soul keeps them
   * anyway, and a passivated one's conversation must not stay on the heap (its next turn then
   * carries its memories whole).
   */
  #memories: WeakRef<readonly unknown[]> | undefined;

  get position(): ReplicaPosition {
    return { ...this.#appender.position, sinceSnapshot: this.#sinceSnapshot };
  }

  get history() {
    return this.local.history;
  }

  commitTurn(commit: TurnCommit): Promise<void> {
    const run = this.#queue.then(() => this.#commit(commit));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The soul moves to another node: no commit starts from now on (a subprocess still running
   * after the soul's last turn would otherwise commit after the new node's claim, be fenced, and
   * stop this node), and this resolves once the commits under way have landed.
   */
  async retire(): Promise<void> {
    this.#retired = true;
    // Acknowledged speech goes with it now, not from a timer after the new node's claim.
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushAcked();
    await this.settled();
    this.#gone = true;
  }

  /** Resolves once the appends queued so far are done (before the node lets its connection go). */
  async settled(): Promise<void> {
    await this.#queue;
  }
  #retired = false;
  #gone = false;

  async #commit(commit: TurnCommit): Promise<void> {
    this.#appender.assertOpen();
    if (this.#retired) throw new Error(`soul '${this.actorId}' has moved to another node: this commit is dropped (the soul's committed turns went with it)`);
    const n = this.#appender.position.n + 1;
    const mark: ReplicaMark = { n, node: this.owner.node, epoch: this.owner.epoch };
    const replicable = this.#replicable(commit);
    const memories = memoriesOf(commit.state);
    const delta = memoryDelta(this.#memories?.deref(), memories ?? []);
    const acked = this.#takeAcked();
    try {
      const common = { kind: "turn", n, owner: this.owner, ...(acked.length > 0 ? { acked } : {}) } as const;
      const record: HistoryRecord = delta ? { v: 2, ...common, commit: withoutMemories(replicable), memories: delta } : { v: 1, ...common, commit: replicable };
      const bytes = encodeRecord(record);
      // A turn the history cannot take is not committed here either: the copies stay one soul.
      assertHistoryRecordSize(this.actorId, bytes.length);
      // Until this record has landed, the next one cannot be a delta from it.
      this.#memories = undefined;
      await this.local.commitTurn({ ...commit, kv: [...(commit.kv ?? []), { namespace: REPLICA_NAMESPACE, key: REPLICA_KEY, value: mark }] });
      await this.#append(bytes, n, "turn");
    } catch (err) {
      this.#acked.unshift(...acked); // they go with the next record
      throw err;
    }
    this.#memories = memories ? new WeakRef(memories) : undefined;
    this.#compactWhenDue();
  }

  /**
   * Queues a compaction once enough records followed the last snapshot. Queued, not awaited:
   * the commit that reached the count resolves first; the next commit waits behind it.
   */
  #compactWhenDue(): void {
    const every = this.compaction.every;
    if (every <= 0 || this.#sinceSnapshot < every || this.#compactionQueued) return;
    this.#compactionQueued = true;
    const run = this.#queue.then(async () => {
      this.#compactionQueued = false;
      if (this.#appender.fenced || this.#retired || this.#sinceSnapshot < every) return;
      await this.#appendSnapshot("compaction");
    });
    this.#queue = run.catch((error: unknown) => this.compaction.report?.({ kind: "failed", soulId: this.actorId, error }));
  }

  /**
   * The whole soul to its history as a snapshot (after a revert rewrote the local copy), in
   * line with the commits and acknowledgements, so two appends never race for one sequence.
   */
  snapshot(): Promise<void> {
    return this.#snapshotInLine("revert");
  }

  /**
   * The soul's first record, when it joins failover: a snapshot with nothing before it to
   * remove. Fenced (another writer came first), it rejects with HistoryFencedError and the store
   * stays usable for nothing: the opening reads the history again (openReplicatedSoul.ts).
   */
  seed(): Promise<void> {
    return this.#snapshotInLine("seed");
  }

  /** A new owner's first record; fenced, it rejects with HistoryFencedError, as `seed` does. */
  async claim(bytes: Uint8Array, n: number): Promise<void> {
    await this.#append(bytes, n, "claim", { opening: true });
  }

  #snapshotInLine(why: "seed" | "revert"): Promise<void> {
    const run = this.#queue.then(async () => {
      this.#appender.assertOpen();
      await this.#appendSnapshot(why);
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Inside the queue: the soul as the local copy has it now (every commit before it landed,
   * none after it started) as the next record. A compaction's snapshot (and a revert's, on a
   * node that compacts) replaces the records before it as it lands, in one fenced step (the
   * log's `compacts`), so a stale owner's removes nothing. One too large for a single message
   * cannot: a compaction's is then not written (reported, tried again `every` records later),
   * a revert's is written plain, the records before it kept.
   */
  async #appendSnapshot(why: "seed" | "revert" | "compaction"): Promise<void> {
    const started = performance.now();
    const n = this.#appender.position.n + 1;
    const bytes = encodeRecord(snapshotRecord(this.local, n, this.owner));
    // The dump has every acknowledgement that landed locally: none of them needs a record of its own now.
    const acked = this.#takeAcked();
    // The turn after a snapshot carries its memories whole (those of a dump are copies, seldom the soul's own objects).
    this.#memories = undefined;
    let compacted: boolean;
    try {
      compacted = await this.#appendSnapshotRecord(bytes, n, why);
    } catch (err) {
      this.#acked.unshift(...acked);
      throw err;
    }
    this.#sinceSnapshot = 0;
    await this.local.kv(REPLICA_NAMESPACE).put(REPLICA_KEY, { n, node: this.owner.node, epoch: this.owner.epoch } satisfies ReplicaMark);
    if (compacted) this.compaction.report?.({ kind: "compacted", soulId: this.actorId, n, bytes: bytes.length, ms: performance.now() - started });
  }

  /** Appends a snapshot record; resolves with whether it replaced the records before it. */
  async #appendSnapshotRecord(bytes: Uint8Array, n: number, why: "seed" | "revert" | "compaction"): Promise<boolean> {
    const compacts = why === "compaction" || (why === "revert" && this.compaction.every > 0);
    try {
      await this.#append(bytes, n, "snapshot", { opening: why === "seed", compacts });
      return compacts;
    } catch (err) {
      if (!(err instanceof HistoryCompactionTooLargeError)) throw err;
      // Nothing was sent. A revert must reach the history all the same; a compaction waits `every` more records.
      if (why !== "revert") {
        this.#sinceSnapshot = 0;
        throw err;
      }
      await this.#append(bytes, n, "snapshot");
      return false;
    }
  }

  #takeAcked(): string[] {
    const acked = this.#acked;
    this.#acked = [];
    return acked;
  }

  /**
   * Acknowledged speech goes to the history with the next turn; a soul that says nothing more
   * for a while sends it on its own (an `acked` record), or a node rebuilding the soul much
   * later would publish it again, past the says stream's two-minute duplicate window.
   */
  #flushAcked = (): void => {
    this.#flushTimer = undefined;
    const run = this.#queue.then(async () => {
      if (this.#appender.fenced || this.#gone || this.#acked.length === 0) return;
      const acked = this.#takeAcked();
      const n = this.#appender.position.n + 1;
      const record: HistoryRecord = { v: 1, kind: "acked", n, owner: this.owner, acked };
      try {
        await this.#append(encodeRecord(record), n, "acked");
      } catch {
        this.#acked.unshift(...acked); // sent with the next turn, or the next flush
        return;
      }
      await this.local.kv(REPLICA_NAMESPACE).put(REPLICA_KEY, { n, node: this.owner.node, epoch: this.owner.epoch } satisfies ReplicaMark);
    });
    this.#queue = run.catch(() => undefined);
  };
  #flushTimer: ReturnType<typeof setTimeout> | undefined;

  /** Appends a record this store made, once it has landed (recordAppender.ts); it counts towards the next compaction. */
  async #append(bytes: Uint8Array, n: number, kind: HistoryRecord["kind"], how: AppendHow = {}): Promise<void> {
    await this.#appender.append(bytes, n, kind, how);
    this.#sinceSnapshot += 1;
  }

  /** The commit as another node applies it: the trace stays here, and an inbox entry named by id travels with its perception. */
  #replicable(commit: TurnCommit): TurnCommit {
    const { log, inboxDone, ...rest } = commit;
    const out: TurnCommit = { ...rest };
    if (log) out.log = { kind: log.kind, at: log.at };
    if (inboxDone !== undefined) {
      const entry = this.local.inboxEntry(inboxDone);
      if (entry) out.inboxRecord = { id: inboxDone, perception: entry.perception };
    }
    return out;
  }

  async ackOutbox(id: string): Promise<void> {
    await this.local.ackOutbox(id);
    this.#acked.push(id);
    if (!this.#flushTimer && !this.#retired) {
      this.#flushTimer = setTimeout(this.#flushAcked, ACK_FLUSH_MS);
      this.#flushTimer.unref?.();
    }
  }

  loadState = () => this.local.loadState();
  receive = (id: string, perception: unknown) => this.local.receive(id, perception);
  markError = (id: string, error: string) => this.local.markError(id, error);
  inboxEntry = (id: string) => this.local.inboxEntry(id);
  pendingInbox = () => this.local.pendingInbox();
  pendingOutbox = () => this.local.pendingOutbox();
  schedules = () => this.local.schedules();
  putSchedule: ActorStore["putSchedule"] = (entry) => this.local.putSchedule(entry);
  deleteSchedule = (id: string) => this.local.deleteSchedule(id);
  kvRange: NonNullable<ActorStore["kvRange"]> = (namespace, prefix) => this.local.kvRange?.(namespace, prefix) ?? [];
  destroy = () => this.local.destroy();
}
