/**
 * The records of a soul's replicated history (docs/STORAGE.md "Failover"), MessagePack:
 *
 * - `turn`: one committed turn, the same TurnCommit the node wrote to LMDB (its trace left
 *   out: the debugger's detail stays local), and the outbox entries acknowledged since the
 *   previous record, so a restore does not deliver speech again that was delivered. Its working
 *   memory's memories may instead come as `memories`, a delta from the previous turn record's
 *   (memoryDelta.ts); such a record is version 2, so a node that cannot apply it refuses it;
 * - `snapshot`: the soul's whole state (runtime/store ActorTransfer's dump), a base that the
 *   records after it apply to (written when a soul first joins failover, after a revert, and
 *   every `snapshotEvery` records: then the records before it are removed, historyCompaction.ts),
 *   with `inboxDone`, the ids of perceptions the soul already processed (a dump has none), so a
 *   copy rebuilt from it does not answer them again; a snapshot without it (an older writer)
 *   is read as one that knows none;
 * - `acked`: outbox entries acknowledged (their speech published) with no turn after them yet
 *   to carry them;
 * - `claim`: a node took the soul (a new process of the same node, or another node); written
 *   first, so whoever owned it before is fenced off (soulHistoryLog.ts).
 *
 * `n` counts a soul's records from 1, whatever the log's own sequence; with the owner's epoch
 * it says which record a local copy has reached.
 */
import { Packr } from "msgpackr";
import type { ActorDump, TurnCommit } from "../../store/index.ts";
import type { MemoryDelta } from "./memoryDelta.ts";

export const HISTORY_RECORD_VERSION = 1;
/** A turn record whose memories are a delta (`memories`). */
export const DELTA_RECORD_VERSION = 2;

export interface RecordOwner {
  node: string;
  /** The node's liveness-lease revision: one per process. */
  epoch: number;
  /** The soul's lease revision. */
  lease: number;
}

export type HistoryRecord = (
  | { v: 1; kind: "turn"; n: number; owner: RecordOwner; commit: TurnCommit; acked?: string[] }
  | { v: 2; kind: "turn"; n: number; owner: RecordOwner; commit: TurnCommit; acked?: string[]; memories: MemoryDelta }
  | { v: 1; kind: "snapshot"; n: number; owner: RecordOwner; dump: ActorDump | null; inboxDone?: string[] }
  | { v: 1; kind: "claim"; n: number; owner: RecordOwner }
  | { v: 1; kind: "acked"; n: number; owner: RecordOwner; acked: string[] }
) & {
  /** When it was written (epoch ms, the writer's clock; set by encodeRecord): a takeover replays missed perceptions from a little before it. */
  at?: number;
};

/** Where a local copy stands: the last record it holds. Kept in the soul's `replica` namespace. */
export interface ReplicaMark {
  n: number;
  node: string;
  epoch: number;
}

export const REPLICA_NAMESPACE = "replica";
export const REPLICA_KEY = ["at"];

// Plain maps, no records extension: the bytes are read back by another node, maybe another version.
const packr = new Packr({ useRecords: false, mapsAsObjects: true });

export function encodeRecord(record: HistoryRecord): Uint8Array {
  return packr.pack(record.at === undefined ? { ...record, at: Date.now() } : record);
}

export function decodeRecord(soulId: string, bytes: Uint8Array): HistoryRecord {
  const r = packr.unpack(bytes) as Partial<HistoryRecord> | null;
  const known = r?.v === HISTORY_RECORD_VERSION || (r?.v === DELTA_RECORD_VERSION && r.kind === "turn");
  if (typeof r !== "object" || r === null || !known || typeof r.n !== "number" || !r.owner || !["turn", "snapshot", "claim", "acked"].includes(String(r.kind))) {
    throw new Error(`soul '${soulId}': a history record this node cannot read (version ${String((r as { v?: unknown } | null)?.v)}); was it written by a newer ensoul?`);
  }
  return r as HistoryRecord;
}

export function markOf(record: HistoryRecord): ReplicaMark {
  return { n: record.n, node: record.owner.node, epoch: record.owner.epoch };
}

export function sameMark(a: ReplicaMark | undefined, b: ReplicaMark): boolean {
  return a !== undefined && a.n === b.n && a.node === b.node && a.epoch === b.epoch;
}
