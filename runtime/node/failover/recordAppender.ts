/**
 * Appends one soul's records to its replicated history, one after another, each until it has
 * landed (docs/STORAGE.md, "Failover and placement"). A failure that is neither the fence nor a
 * refusal sends the same bytes again under the same id, so a record whose acknowledgement was
 * lost is recognised, not stored twice (soulHistoryLog.ts), and a record number is never used
 * for another record: the next record waits until this one has landed. There is no deadline: a
 * soul whose record has not landed takes no further turn (NATS away for a minute is said in the
 * node's log). Only a node that stops gives up waiting; its local copy may then be one record
 * ahead of the history, and the soul's next opening takes the history's word for it
 * (openReplicatedSoul.ts).
 */
import { HistoryCompactionTooLargeError, HistoryDuplicateError, HistoryFencedError, HistoryRecordTooLargeError, type SoulHistoryLog } from "../../bus/index.ts";
import type { HistoryRecord, RecordOwner } from "./historyRecord.ts";

/** How long an append waits for NATS before the node's log says so. */
const PATIENCE_MS = 60_000;

export interface ReplicaPosition {
  /** The soul's last record number. */
  n: number;
  /** The log's sequence of that record (0: none). */
  lastSeq: number;
  /** Records after the soul's last snapshot (default 0). */
  sinceSnapshot?: number;
}

export interface AppenderHooks {
  /** Another node appended to the soul's history: it owns the soul now. */
  onFenced: (soulId: string, err: unknown) => void;
  /** A line for the node's log: an append that has waited a while. */
  say?: (line: string) => void;
  /** How long an append waits before `say` is told (default a minute). */
  patienceMs?: number;
  /**
   * Whether a failed append is still sent again (default: always). The node answers no once it
   * stops, so no turn, and no opening, waits for NATS for ever; it is asked after each failure,
   * and a waiting append hears it within a pause (two seconds at most).
   */
  keepTrying?: () => boolean;
}

export class SoulFencedError extends Error {
  constructor(soulId: string, cause?: unknown) {
    super(`soul '${soulId}' is owned by another node now: this node may not commit for it`, { cause });
    this.name = "SoulFencedError";
  }
}

/** The node stopped while a record was not known to have landed: the soul's next opening decides from its history. */
export class RecordNotLandedError extends Error {
  constructor(soulId: string, n: number, kind: string, cause: unknown) {
    super(`soul '${soulId}': the node stopped before its ${kind} record ${n} was known to be in the replicated history (${messageOf(cause)}); the soul's next opening takes the history's word for it`, { cause });
    this.name = "RecordNotLandedError";
  }
}

export interface AppendHow {
  /** A claim or first snapshot while the soul opens: a fence there means "read again", not "taken over". */
  opening?: boolean;
  /** The record replaces the soul's records before it (a compaction's snapshot: SoulHistoryLog's `compacts`). */
  compacts?: boolean;
}

export class RecordAppender {
  #position: { n: number; lastSeq: number };
  /** Why no record may be appended any more. */
  #stopped: Error | undefined;

  constructor(
    readonly soulId: string,
    readonly owner: RecordOwner,
    private readonly log: SoulHistoryLog,
    position: { n: number; lastSeq: number },
    private readonly hooks: AppenderHooks,
  ) {
    this.#position = { n: position.n, lastSeq: position.lastSeq };
  }

  get position(): { n: number; lastSeq: number } {
    return this.#position;
  }

  /** Throws why this soul may append no more: fenced off, its node stopping, or a record the history took for another. */
  assertOpen(): void {
    if (this.#stopped) throw this.#stopped;
  }

  get fenced(): boolean {
    return this.#stopped instanceof SoulFencedError;
  }

  /** Appends record `n` after the soul's last one; resolves once it has landed. */
  async append(bytes: Uint8Array, n: number, kind: HistoryRecord["kind"], how: AppendHow = {}): Promise<void> {
    this.assertOpen();
    const msgId = `${this.soulId}:${this.owner.node}:${this.owner.epoch}:${n}`;
    const started = Date.now();
    let said = false;
    for (let pause = 100; ; pause = Math.min(pause * 2, 2_000)) {
      try {
        const seq = await this.log.append(this.soulId, bytes, this.#position.lastSeq, { msgId, kind, n, ...(how.compacts ? { compacts: true } : {}) });
        this.#position = { n, lastSeq: seq };
        return;
      } catch (err) {
        this.#refuse(err, how);
        if (!said && Date.now() - started >= (this.hooks.patienceMs ?? PATIENCE_MS)) {
          said = true;
          this.hooks.say?.(`soul ${this.soulId}: its ${kind} record ${n} has not reached the replicated history for ${Math.round((Date.now() - started) / 1000)} s (${messageOf(err)}); the soul takes no further turn until it has`);
        }
        if (this.#keepTrying()) await pauseFor(pause);
        if (!this.#keepTrying()) throw this.#stop(new RecordNotLandedError(this.soulId, n, kind, err));
      }
    }
  }

  #keepTrying(): boolean {
    return this.hooks.keepTrying?.() ?? true;
  }

  /** What no retry can help: the fence, a record too large (for the history, or to compact in one message), an id the history holds another record under. */
  #refuse(err: unknown, how: AppendHow): void {
    if (err instanceof HistoryFencedError) {
      if (how.opening) throw err;
      this.hooks.onFenced(this.soulId, err);
      throw this.#stop(new SoulFencedError(this.soulId, err));
    }
    if (err instanceof HistoryDuplicateError) throw this.#stop(err);
    if (err instanceof HistoryRecordTooLargeError || err instanceof HistoryCompactionTooLargeError) throw err;
  }

  #stop(err: Error): Error {
    this.#stopped ??= err;
    return this.#stopped;
  }

}

/** A pause that does not keep a stopping process alive. */
function pauseFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
