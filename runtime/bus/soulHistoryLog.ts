/**
 * A soul's replicated history (failover, docs/STORAGE.md "Failover"): an append-only log per
 * soul that outlives the machine that wrote it. On NATS it is the JetStream stream
 * `ENSOUL_<cluster>_HISTORY`, one subject per soul, `ensoul.<cluster>.history.<soulId>`, with
 * the replicas the cluster config asks for (natsSoulHistory.ts).
 *
 * Appends are fenced: each names the sequence of the soul's last record it knows, and the log
 * refuses it (HistoryFencedError) when another writer has appended since. That is how a stale
 * owner (a paused process whose lease another node has taken) is kept from committing: the
 * new owner's first act is an append, so the stale one's next append names an old sequence.
 *
 * An append under a message id is idempotent: sent again after its acknowledgement was lost,
 * it is answered with the sequence it landed at, within JetStream's duplicate window and past
 * it; a different record under an id already used is refused (HistoryDuplicateError).
 *
 * Compaction is an append too: a snapshot that `compacts` replaces every earlier record of the
 * soul in the same step, fenced like any append, so a stale owner can remove nothing, and no
 * writer needs a right to purge the stream (a right that would reach every soul's records).
 */
import { SUBJECT_ROOT } from "./subjects.ts";
import { assertName } from "./subjects.ts";

/** The largest record a log takes (a turn's commit holds the soul's whole working memory). */
export const MAX_HISTORY_RECORD_BYTES = 64 * 1024 * 1024;

export interface HistoryEntry {
  /** The log's sequence of this record (stream sequence on NATS): increases, not by one per soul. */
  seq: number;
  data: Uint8Array;
}

/** A soul's records as read, and what the next append is fenced on. */
export interface HistoryRead {
  entries: HistoryEntry[];
  /**
   * The sequence of the soul's last stored message (0: none): the last entry's, or that of a
   * part of a record its writer never finished (no entry, but the next append comes after it).
   */
  lastSeq: number;
}

/** What one append is: how it is recognised when sent again, and what the fault points report. */
export interface AppendOptions {
  /**
   * The record's id. The same record sent again under it (its acknowledgement lost) is answered
   * with the sequence it landed at, within JetStream's duplicate window and past it; another
   * record under an id already used is refused (HistoryDuplicateError), nothing stored.
   */
  msgId?: string;
  /** The record's kind (`turn`, `snapshot`, `claim`, `acked`); a `claim` is the `history.claim` fault point, the others `history.append`. */
  kind?: string;
  /** The record's number in the soul's history. */
  n?: number;
  /**
   * The record replaces every earlier record of the soul, in the same step as it lands (a
   * compaction's snapshot; the `history.purge` fault point). Only a record that fits in one
   * message can: HistoryCompactionTooLargeError otherwise, and nothing is sent.
   */
  compacts?: boolean;
}

export interface SoulHistoryLog {
  /**
   * Appends one record after `expectedLastSeq` (0: the soul has none yet); resolves with its
   * sequence once the log has it (replicated, on NATS). Rejects with HistoryFencedError when
   * the soul's last record is another one (not this record, sent before under the same id).
   */
  append(soulId: string, data: Uint8Array, expectedLastSeq: number, options?: AppendOptions): Promise<number>;
  /** The soul's records after `afterSeq` (default: all), oldest first, and its last stored sequence. */
  read(soulId: string, afterSeq?: number): Promise<HistoryRead>;
  /**
   * The cluster stream's messages on one subject (a soul's `perceive` or `internal`) stored
   * since `sinceMs`, oldest first: what a node taking a soul over reads to find perceptions the
   * soul's previous node never answered (the other nodes' consumers passed them by).
   */
  streamSince(subject: string, sinceMs: number): Promise<HistoryEntry[]>;
}

export class HistoryFencedError extends Error {
  constructor(
    readonly soulId: string,
    readonly expectedLastSeq: number,
  ) {
    super(`soul '${soulId}': its history has a record after ${expectedLastSeq} that this node did not write (another node owns the soul now)`);
    this.name = "HistoryFencedError";
  }
}

/** A record over MAX_HISTORY_RECORD_BYTES: refused at once, and sending it again cannot help. */
export class HistoryRecordTooLargeError extends Error {
  constructor(
    readonly soulId: string,
    readonly bytes: number,
  ) {
    super(`soul '${soulId}': a history record of ${bytes} bytes is over the ${MAX_HISTORY_RECORD_BYTES}-byte limit (its state is too large to replicate)`);
    this.name = "HistoryRecordTooLargeError";
  }
}

/** A compacting record too large for one message: nothing was sent (a rollup in parts would leave no whole record while its parts land). */
export class HistoryCompactionTooLargeError extends Error {
  constructor(
    readonly soulId: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`soul '${soulId}': a snapshot of ${bytes} bytes does not fit in one message (${limit} bytes, from the server's max_payload), so it cannot replace the records before it`);
    this.name = "HistoryCompactionTooLargeError";
  }
}

/** The log acknowledged an append as a duplicate of a record that holds other bytes: one id was used for two records. */
export class HistoryDuplicateError extends Error {
  constructor(
    readonly soulId: string,
    readonly msgId: string,
    readonly seq: number,
  ) {
    super(`soul '${soulId}': the history took the append ${msgId} for one it already has (sequence ${seq}), but that record is a different one: nothing was stored`);
    this.name = "HistoryDuplicateError";
  }
}

/** Refuses a record over MAX_HISTORY_RECORD_BYTES: the log before it sends it, a store before it commits the turn locally. */
export function assertHistoryRecordSize(soulId: string, bytes: number): void {
  if (bytes > MAX_HISTORY_RECORD_BYTES) throw new HistoryRecordTooLargeError(soulId, bytes);
}

export function historyStreamName(cluster: string): string {
  return `ENSOUL_${assertName("cluster", cluster)}_HISTORY`;
}

export function historySubject(cluster: string, soulId: string): string {
  return `${SUBJECT_ROOT}.${assertName("cluster", cluster)}.history.${assertName("soul id", soulId)}`;
}

export function historySubjects(cluster: string): string {
  return `${SUBJECT_ROOT}.${assertName("cluster", cluster)}.history.*`;
}
