/**
 * Compaction of a soul's replicated history (docs/STORAGE.md "Failover and placement"). Left
 * alone, the history grows by a record per turn and a rebuild replays every turn since the
 * soul first joined failover. So the soul's owner writes a fresh `snapshot` every
 * `snapshotEvery` records after the last one, fenced like any append, that replaces the records
 * before it as it lands (SoulHistoryLog's `compacts`: JetStream's per-subject rollup on NATS).
 *
 * A snapshot replaces the records before it only if it says what they said. A dump carries the
 * state, the inbox entries not yet done and the outbox entries not yet acknowledged (the
 * acknowledged ones are gone from it), but not the done inbox entries, which the turn records
 * brought: a copy rebuilt from a bare dump would take a perception answered just before the
 * snapshot for a missed one (missedPerceptions.ts) and answer it again. So the snapshot also
 * carries the ids of the done entries: all of them, or the DONE_IDS_CARRIED most recent.
 */
import type { LmdbActorStore } from "../../store/index.ts";
import type { HistoryRecord, RecordOwner } from "./historyRecord.ts";

/** Records after a snapshot before the owner writes the next one (runtime.failover.snapshotEvery). */
export const DEFAULT_SNAPSHOT_EVERY = 1_000;

/**
 * Done inbox ids a snapshot carries at most (about 30 bytes each). A takeover's replay reads
 * perceptions from two minutes before the soul's last record, and a redelivery comes within the
 * consumer's ack wait: tens of thousands of perceptions back is far past both.
 */
export const DONE_IDS_CARRIED = 50_000;

/** The soul as it stands in the local copy, as a snapshot record numbered `n`. */
export function snapshotRecord(local: LmdbActorStore, n: number, owner: RecordOwner): HistoryRecord {
  const dump = local.dump() ?? null;
  const inboxDone = dump ? local.doneInboxIds(DONE_IDS_CARRIED) : [];
  return { v: 1, kind: "snapshot", n, owner, dump, ...(inboxDone.length > 0 ? { inboxDone } : {}) };
}

/** Replaces the local copy with a snapshot record's soul (nothing, for a snapshot of a soul that had no state). */
export async function restoreSnapshot(local: LmdbActorStore, record: HistoryRecord & { kind: "snapshot" }): Promise<void> {
  if (!record.dump) {
    await local.destroy();
    return;
  }
  const done = record.inboxDone && record.inboxDone.length > 0 ? { ids: record.inboxDone, at: record.at ?? Date.now() } : undefined;
  await local.restore(record.dump, { replace: true, ...(done ? { done } : {}) });
}

export interface CompactionOptions {
  /** Records after the last snapshot that make the owner write the next one (0: never). */
  every: number;
  /** A compaction that failed (the soul goes on; the next one tries again), or one done. */
  report?: (event: CompactionEvent) => void;
}

export type CompactionEvent =
  | { kind: "compacted"; soulId: string; n: number; bytes: number; ms: number }
  | { kind: "failed"; soulId: string; error: unknown };

/** A node's compaction: a failed one is said in its log (the soul goes on; the next one tries again). */
export function loggedCompaction(nodeId: string, every: number, log: (line: string) => void): CompactionOptions {
  return {
    every,
    report: (event) => {
      if (event.kind === "failed") log(`node ${nodeId}: soul ${event.soulId}: its history was not compacted this time (${event.error instanceof Error ? event.error.message : String(event.error)})`);
    },
  };
}
