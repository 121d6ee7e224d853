/**
 * Opening a soul under failover: the node takes the soul's lease, reads its replicated
 * history, and makes the local LMDB copy match it before the soul runs.
 *
 * - The local copy's mark (the last record it holds, written with each turn) equals the
 *   history's last record: the copy is current; nothing to do.
 * - Anything else (a new machine with no copy, a copy a stale owner wrote past the history, a
 *   copy from before another node owned the soul): the copy is rebuilt from the history, the
 *   last snapshot restored and every turn after it applied, in order, through the same
 *   `commitTurn` a live turn uses.
 * - The history is empty (the soul is new, or ran before failover was on): what the node has
 *   is sent as a snapshot, so from now on losing this machine loses nothing.
 *
 * Unless this very process wrote the last record, the node then appends a `claim`: a previous
 * owner that wakes up finds its next append fenced (soulHistoryLog.ts). A claim (or a first
 * snapshot) that is itself fenced means that previous owner landed a record after this node's
 * read: the node reads the history again and claims after it, a few times at most; it never
 * takes a fenced opening for this node's own takeover (that would stop the node).
 */
import { HistoryFencedError, type LeaseStore, type SoulHistoryLog } from "../../bus/index.ts";
import type { LmdbActorStore } from "../../store/index.ts";
import { restoreSnapshot, type CompactionOptions } from "./historyCompaction.ts";
import { applyMemoryDelta, memoriesOf, withMemories } from "./memoryDelta.ts";
import { decodeRecord, DELTA_RECORD_VERSION, encodeRecord, markOf, REPLICA_KEY, REPLICA_NAMESPACE, sameMark, type HistoryRecord, type RecordOwner, type ReplicaMark } from "./historyRecord.ts";
import { ReplicatedActorStore, type ReplicatedStoreHooks } from "./replicatedActorStore.ts";

export interface OpenSoulOptions {
  local: LmdbActorStore;
  log: SoulHistoryLog;
  leases: LeaseStore;
  nodeId: string;
  /** This process's node-lease revision. */
  epoch: number;
  onFenced: (soulId: string, err: unknown) => void;
  /** How often the soul's store compacts its history (default: never). */
  compaction?: CompactionOptions;
  /** A line for the node's log (an append that waits for NATS). */
  say?: (line: string) => void;
  /** Whether a failed append is still sent again (the node says no once it stops). */
  keepTrying?: () => boolean;
}

function hooksOf(o: OpenSoulOptions): ReplicatedStoreHooks {
  const { onFenced, compaction, say, keepTrying } = o;
  return { onFenced, ...(compaction ? { compaction } : {}), ...(say ? { say } : {}), ...(keepTrying ? { keepTrying } : {}) };
}

export interface OpenedSoul {
  store: ReplicatedActorStore;
  /** What opening did, for the node's log and events. */
  restored: "current" | "rebuilt" | "seeded";
  /** Records applied when rebuilt. */
  applied: number;
  /** The node that wrote the soul's last record before this one opened it, and when (none: seeded). */
  previous?: { node: string; at?: number };
}

/**
 * How many times an opening reads the history again after its claim was fenced. Each fence
 * means another writer (a previous owner, paused, whose lease lapsed) landed a record between
 * the read and the claim; that writer stops at its next append once a claim has landed.
 */
const OPEN_TRIES = 5;

export async function openReplicatedSoul(o: OpenSoulOptions): Promise<OpenedSoul> {
  const soulId = o.local.actorId;
  const lease = await o.leases.acquireSoul(soulId, o.nodeId);
  const owner: RecordOwner = { node: o.nodeId, epoch: o.epoch, lease };
  for (let attempt = 1; ; attempt++) {
    try {
      return await openFromHistory(o, owner);
    } catch (err) {
      // A fenced claim is not a takeover of this node: read again, catch up, claim after it.
      if (!(err instanceof HistoryFencedError)) throw err;
      if (attempt >= OPEN_TRIES) throw new Error(`soul '${soulId}': its history kept changing while node ${o.nodeId} opened it (${OPEN_TRIES} reads): another node still writes it; the opening is tried again later`, { cause: err });
    }
  }
}

/** One reading of the history: the local copy brought up to it, then this node's claim after its last record. */
async function openFromHistory(o: OpenSoulOptions, owner: RecordOwner): Promise<OpenedSoul> {
  const soulId = o.local.actorId;
  // `lastSeq` counts a record its writer never finished: the claim must come after it, or it is fenced for ever.
  const { entries, lastSeq } = await o.log.read(soulId);
  const records = entries.map((e) => decodeRecord(soulId, e.data));
  const marks = o.local.kv<ReplicaMark>(REPLICA_NAMESPACE);

  if (records.length === 0) {
    const store = new ReplicatedActorStore(o.local, o.log, owner, { n: 0, lastSeq }, hooksOf(o));
    await store.seed();
    return { store, restored: "seeded", applied: 0 };
  }

  const last = records.at(-1) as HistoryRecord;
  const previous = { node: last.owner.node, ...(last.at !== undefined ? { at: last.at } : {}) };
  let restored: OpenedSoul["restored"] = "current";
  let applied = 0;
  if (!sameMark(marks.get(REPLICA_KEY), markOf(last))) {
    applied = await rebuild(o.local, records);
    await marks.put(REPLICA_KEY, markOf(last));
    restored = "rebuilt";
  }
  const sinceSnapshot = records.length - 1 - lastSnapshotIndex(records);
  const store = new ReplicatedActorStore(o.local, o.log, owner, { n: last.n, lastSeq, sinceSnapshot }, hooksOf(o));
  if (last.owner.node !== o.nodeId || last.owner.epoch !== o.epoch) {
    const claim: HistoryRecord = { v: 1, kind: "claim", n: last.n + 1, owner };
    await store.claim(encodeRecord(claim), claim.n);
    await marks.put(REPLICA_KEY, markOf(claim));
  }
  return { store, restored, applied, previous };
}

/** Where the last snapshot is among the records (-1: none). */
function lastSnapshotIndex(records: readonly HistoryRecord[]): number {
  for (let i = records.length - 1; i >= 0; i--) if (records[i]?.kind === "snapshot") return i;
  return -1;
}

/**
 * Replaces the local copy with what the records say: the last snapshot (with the perceptions
 * it knows as done), then each turn after it.
 */
async function rebuild(local: LmdbActorStore, records: readonly HistoryRecord[]): Promise<number> {
  const from = lastSnapshotIndex(records);
  const base = records[from];
  if (base?.kind === "snapshot") await restoreSnapshot(local, base);
  else await local.destroy();
  let applied = 0;
  // The memories the next delta applies to: the snapshot's, then each turn's.
  let memories = base?.kind === "snapshot" ? memoriesOf(base.dump?.state) : undefined;
  for (const record of records.slice(from + 1)) {
    if (record.kind === "turn") {
      const commit = record.v === DELTA_RECORD_VERSION ? withMemories(record.commit, applyMemoryDelta(local.actorId, memories, record.memories)) : record.commit;
      await local.commitTurn(commit);
      memories = memoriesOf(commit.state);
      applied += 1;
    }
    if (record.kind === "turn" || record.kind === "acked") for (const id of record.acked ?? []) await local.ackOutbox(id).catch(() => undefined);
  }
  return applied;
}
