/**
 * Working memory kept as a log, one LMDB record per memory, so a turn writes only what it
 * changed instead of the whole conversation.
 *
 * Why: a soul's working memory grows by a few memories a turn. Stored inline in the state
 * record, every commit re-encoded all of it, so the cost of a turn grew with the length of
 * the conversation (a soul 2,000 turns old spent over a millisecond per turn in msgpack).
 * Here the state record keeps only the working memory's header and a count, and memories
 * live under `[actorId, index]` in the `memories` database.
 *
 * What a commit writes: the memories after the longest prefix the new working memory shares
 * with the one last committed, and removes the old ones beyond the new length. Memories are
 * frozen values, so the prefix is found by identity (with a field-by-field check for copies).
 * A turn that appends writes what it appended; one that rewrites the front (a summary region, a window that drops the oldest) rewrites the rest,
 * which is never more than the old layout wrote.
 *
 * The last committed memories are held through a WeakRef: a live soul holds them anyway, and
 * a passivated soul's handle must not keep its conversation on the heap. When the reference
 * is gone, the log is read back from LMDB inside the write transaction. The count of memories
 * logged is kept as well, so a commit need not read and decode the state record it replaces
 * (tens of microseconds for a soul with a large snapshot): this log is the only writer of its
 * actor's memories (the Store hands out one per actor), and a failed write forgets both.
 *
 * A state written inline by an older version still loads; its first commit moves the
 * memories into the log.
 */
import type { Database, Key } from "lmdb";
import { prefixRange } from "./keys.ts";
import { StoreError, type ActorState } from "./types.ts";

/** The working memory's header as the state record keeps it; `memories` is in the log. */
interface LoggedWorkingMemory {
  [field: string]: unknown;
  memoryCount: number;
}

interface SerializedWithMemories {
  [field: string]: unknown;
  memories: readonly unknown[];
}

function hasMemoryArray(wm: unknown): wm is SerializedWithMemories {
  return typeof wm === "object" && wm !== null && Array.isArray((wm as { memories?: unknown }).memories);
}

function isLogged(wm: unknown): wm is LoggedWorkingMemory {
  return typeof wm === "object" && wm !== null && !("memories" in wm) && Number.isSafeInteger((wm as { memoryCount?: unknown }).memoryCount);
}

/**
 * The same memory: the same object, or a copy with the same own fields holding the same
 * values (nested values by reference). The store does not assume a memory's shape.
 */
function sameMemory(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && x[k] === y[k]);
}

function loggedCount(record: ActorState | undefined): number {
  return record && isLogged(record.workingMemory) ? record.workingMemory.memoryCount : 0;
}

/** How many memories at the front of `next` are the same as at the front of `base`. */
function sharedPrefix(base: readonly unknown[], next: readonly unknown[]): number {
  const limit = Math.min(base.length, next.length);
  let keep = 0;
  // Identity first, in a loop the JIT keeps tight: a turn that appends shares every memory.
  while (keep < limit && base[keep] === next[keep]) keep++;
  while (keep < limit && sameMemory(base[keep], next[keep])) keep++;
  return keep;
}

export class MemoryLog {
  readonly #actorId: string;
  readonly #db: Database<unknown, Key>;
  /** What the log holds, when known: the memories last written or loaded. */
  #known: WeakRef<readonly unknown[]> | undefined;
  /** How many memories the log holds, when known: from the last load or write. */
  #count: number | undefined;

  constructor(actorId: string, db: Database<unknown, Key>) {
    this.#actorId = actorId;
    this.#db = db;
  }

  /** The state as callers see it: working memory with its memories, read back from the log. */
  load(stored: ActorState | undefined): ActorState | undefined {
    if (!stored) return stored;
    const wm = stored.workingMemory;
    if (!isLogged(wm)) return stored;
    const memories = this.#read(wm.memoryCount);
    // A write of ours may be committing now, and is newer than what this read saw: keep its account.
    if (this.#count === undefined) {
      this.#known = new WeakRef(memories);
      this.#count = memories.length;
    }
    const { memoryCount: _count, ...header } = wm;
    return { ...stored, workingMemory: { ...header, memories } };
  }

  /**
   * Inside the commit's write transaction: writes the memories that changed and returns the
   * state record to store, with a count in place of the memories. `previous` reads the record
   * as the transaction sees it, when the count is not known. `written()` must be the body's
   * last call, so the memories are taken as the log's only when nothing after them threw.
   */
  writeInTransaction(state: ActorState, previous: () => ActorState | undefined): { record: ActorState; written: () => void } {
    const wm = state.workingMemory;
    const logged = this.#count ?? loggedCount(previous());
    if (!hasMemoryArray(wm)) {
      for (let i = 0; i < logged; i++) void this.#db.remove([this.#actorId, i]);
      return { record: state, written: () => void ((this.#known = undefined), (this.#count = 0)) };
    }
    const memories = wm.memories;
    const known = this.#known?.deref();
    // Trusted only when it agrees with the transaction's count; otherwise read back.
    const base = known !== undefined && known.length === logged ? known : logged > 0 ? this.#read(logged) : [];
    const keep = sharedPrefix(base, memories);
    for (let i = keep; i < memories.length; i++) void this.#db.put([this.#actorId, i], memories[i]);
    for (let i = memories.length; i < logged; i++) void this.#db.remove([this.#actorId, i]);
    const { memories: _memories, ...header } = wm;
    return {
      record: { ...state, workingMemory: { ...header, memoryCount: memories.length } },
      written: () => void ((this.#known = new WeakRef(memories)), (this.#count = memories.length)),
    };
  }

  /** A write failed, or the actor was destroyed: what the log holds is read back next time. */
  forget(): void {
    this.#known = undefined;
    this.#count = undefined;
  }

  /** The memories a commit of `state` would write, for the map-size check. */
  changed(state: ActorState): readonly unknown[] {
    const wm = state.workingMemory;
    if (!hasMemoryArray(wm)) return [];
    return wm.memories.slice(sharedPrefix(this.#known?.deref() ?? [], wm.memories));
  }

  #read(count: number): unknown[] {
    const memories: unknown[] = [];
    for (const { key, value } of this.#db.getRange(prefixRange([this.#actorId]))) {
      if ((key as unknown[])[1] !== memories.length || memories.length >= count) break;
      memories.push(value);
    }
    if (memories.length !== count) {
      throw new StoreError(`working memory of actor ${this.#actorId} is incomplete in LMDB: ${memories.length} of ${count} memories found`);
    }
    return memories;
  }
}
