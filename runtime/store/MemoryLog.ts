/**
 * Working memory kept as a log, one LMDB record per memory, so a turn writes only what it
 * changed instead of the whole conversation.
 *
 * Why: a soul's working memory grows by a few memories a turn. Stored inline in the state
 * record, every commit re-encoded all of it, so the cost of a turn grew with the length of
 * the conversation (a soul 2,000 turns old spent over a millisecond per turn in msgpack).
 *
 * Each memory lives in the `memories` database under `[actorId, slot]`. A slot is a number
 * given once and never reused, and a memory's record is never rewritten: a changed memory
 * gets a new slot. The state record keeps the working memory's header and the order of the
 * slots, as runs of consecutive slots (`memoryRuns: [first, length][]`), so the record stays
 * a few bytes whatever the length of the conversation. Why slots and not positions: a soul
 * that keeps a window (Claudius keeps its last 200 conversation memories) drops the oldest
 * every turn, which shifts every position after it. By position, each turn would rewrite
 * the whole window; by slot, it writes what it appended and removes what it dropped.
 *
 * A commit finds each memory's slot: first the longest prefix shared with the memories last
 * committed (by identity, then field by field for equal copies), then, for the rest, the
 * slot each memory object was last written to (a WeakMap) when that slot is still in use.
 * Memories that have none are written to new slots; slots no longer used are removed. When
 * edits have scattered the slots into many runs, a commit rewrites the memories to one
 * run, so the record stays small.
 *
 * The last committed memories are held through a WeakRef: a live soul holds them anyway, and
 * a passivated soul's handle must not keep its conversation on the heap; when they are gone
 * they are read back. The slot order is kept (numbers only), so a commit need not read and
 * decode the state record it replaces: this log is the only writer of its actor's memories
 * (the Store hands out one per actor), and a failed write forgets everything it kept.
 *
 * Older layouts still load: a state written inline (memories in the record), and one that
 * kept `memoryCount` memories at slots 0..count-1. Their next commit writes this layout.
 */
import type { Database, Key } from "lmdb";
import { StoreError, type ActorState } from "./types.ts";

/** A run of consecutive slots: the first, and how many. */
type Run = [first: number, length: number];

/** The working memory's header as the state record keeps it; the memories are in the log. */
interface LoggedWorkingMemory {
  [field: string]: unknown;
  memoryCount: number;
  memoryRuns?: Run[];
  /** The next slot never given. */
  memoryNext?: number;
}

interface SerializedWithMemories {
  [field: string]: unknown;
  memories: readonly unknown[];
}

/** What the log holds, as this process last wrote or read it. */
interface Account {
  /** Slot of each memory, in order. */
  slots: number[];
  /** The same, as runs: what the state record keeps. */
  runs: Run[];
  /** How many places use each slot (an object may be at two places). */
  uses: Map<number, number>;
  next: number;
}

/** Beyond this many runs, a commit gathers the memories into one. */
const MAX_RUNS = 32;

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
export function sameMemory(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && x[k] === y[k]);
}

/**
 * How many memories at the front of `next` are the same as in `base` from `baseFrom` on (at
 * the front of `base`, by default).
 */
export function sharedPrefix(base: readonly unknown[], next: readonly unknown[], baseFrom = 0): number {
  const limit = Math.min(base.length - baseFrom, next.length);
  let keep = 0;
  // Identity first, in a loop the JIT keeps tight: a turn that appends shares every memory.
  while (keep < limit && base[baseFrom + keep] === next[keep]) keep++;
  while (keep < limit && sameMemory(base[baseFrom + keep], next[keep])) keep++;
  return keep;
}

/** Adds `by` to a slot's change of uses. A plain function: a closure per commit costs more than the work (tsx names each one). */
function bump(delta: Map<number, number>, slot: number, by: number): void {
  delta.set(slot, (delta.get(slot) ?? 0) + by);
}

/** Appends slots to runs, extending the last run where they follow on. `runs` is the caller's own. */
function appendRuns(runs: Run[], slots: Iterable<number>): Run[] {
  for (const slot of slots) {
    const last = runs[runs.length - 1];
    if (last && last[0] + last[1] === slot) runs[runs.length - 1] = [last[0], last[1] + 1];
    else runs.push([slot, 1]);
  }
  return runs;
}

function runsOf(slots: readonly number[]): Run[] {
  return appendRuns([], slots);
}

/** The runs of the first `keep` of `total` slots; the runs are few (at most MAX_RUNS + a turn's worth). */
function prefixRuns(runs: readonly Run[], total: number, keep: number): Run[] {
  const out = runs.slice();
  let over = total - keep;
  while (over > 0) {
    const last = out[out.length - 1] as Run;
    if (last[1] <= over) {
      out.pop();
      over -= last[1];
    } else {
      out[out.length - 1] = [last[0], last[1] - over];
      over = 0;
    }
  }
  return out;
}

function isRuns(value: unknown): value is Run[] {
  return Array.isArray(value) && value.every((r) => Array.isArray(r) && r.length === 2 && Number.isSafeInteger(r[0]) && Number.isSafeInteger(r[1]) && r[1] > 0);
}

/** The slot order a stored header gives (the older layout: slots 0..count-1). */
function accountOf(actorId: string, wm: LoggedWorkingMemory): Account {
  // Trusting malformed runs would hand out slots that still hold memories.
  if (wm.memoryRuns !== undefined && !isRuns(wm.memoryRuns)) throw new StoreError(`working memory of actor ${actorId} has malformed memoryRuns in LMDB`);
  const slots: number[] = [];
  if (wm.memoryRuns !== undefined) {
    for (const [first, length] of wm.memoryRuns) for (let i = 0; i < length; i++) slots.push(first + i);
  } else {
    for (let i = 0; i < wm.memoryCount; i++) slots.push(i);
  }
  const uses = new Map<number, number>();
  for (const slot of slots) uses.set(slot, (uses.get(slot) ?? 0) + 1);
  const next = wm.memoryNext ?? slots.reduce((max, s) => Math.max(max, s + 1), 0);
  return { slots, runs: runsOf(slots), uses, next };
}

function emptyAccount(): Account {
  return { slots: [], runs: [], uses: new Map(), next: 0 };
}

export class MemoryLog {
  readonly #actorId: string;
  readonly #db: Database<unknown, Key>;
  /** The memories last written or loaded, while something else holds them. */
  #known: WeakRef<readonly unknown[]> | undefined;
  /** Their slots; `undefined` when not known (read from the state record in the transaction). */
  #account: Account | undefined;
  /** The slot each memory object was last written to or read from. */
  #slotOf = new WeakMap<object, number>();
  /** True while slots the state stops using must stay: the turn log's entries may use them (TurnLog prunes them). */
  readonly #retain: () => boolean;

  constructor(actorId: string, db: Database<unknown, Key>, options: { retain?: () => boolean } = {}) {
    this.#actorId = actorId;
    this.#db = db;
    this.#retain = options.retain ?? (() => false);
  }

  /** The memories a logged working-memory header (a turn log entry's) names, read from their slots. */
  memoriesOf(header: unknown): unknown[] {
    if (hasMemoryArray(header)) return [...header.memories];
    if (!isLogged(header)) return [];
    return this.#read(accountOf(this.#actorId, header).slots);
  }

  /** The state as callers see it: working memory with its memories, read back from the log. */
  load(stored: ActorState | undefined): ActorState | undefined {
    if (!stored) return stored;
    const wm = stored.workingMemory;
    if (!isLogged(wm)) return stored;
    const account = accountOf(this.#actorId, wm);
    const memories = this.#read(account.slots);
    // A write of ours may be committing now, and is newer than what this read saw: keep its account.
    if (this.#account === undefined) {
      this.#known = new WeakRef(memories);
      this.#account = account;
    }
    const { memoryCount: _count, memoryRuns: _runs, memoryNext: _next, ...header } = wm;
    return { ...stored, workingMemory: { ...header, memories } };
  }

  /**
   * Inside the commit's write transaction: writes the memories that changed and returns the
   * state record to store, with the slot order in place of the memories. `previous` reads
   * the record as the transaction sees it, when the slots are not known. `written()` must be
   * the body's last call, so what was written is taken as the log's only when nothing after
   * it threw.
   */
  writeInTransaction(state: ActorState, previous: () => ActorState | undefined): { record: ActorState; written: () => void } {
    const wm = state.workingMemory;
    const account = this.#account ?? this.#accountIn(previous());
    const retain = this.#retain();
    if (!hasMemoryArray(wm)) {
      if (!retain) for (const slot of account.uses.keys()) this.#db.removeSync([this.#actorId, slot]);
      return { record: state, written: () => this.#took(undefined, emptyAccount()) };
    }
    const memories = wm.memories;
    let known = this.#known?.deref();
    if (known === undefined || known.length !== account.slots.length) known = this.#read(account.slots);

    const keep = sharedPrefix(known, memories);
    const was = account.slots.length;
    // What this commit changes, kept apart until written(): the account is the log's only once the body has not thrown.
    // Only a commit that drops memories needs the per-slot sums; one that appends (most turns) adds one use per tail slot.
    const delta = keep < was ? new Map<number, number>() : undefined;
    if (delta) for (let i = keep; i < was; i++) bump(delta, account.slots[i] as number, -1);
    let next = account.next;
    let fresh: [slot: number, memory: unknown][] = [];
    let tail: number[] = [];
    for (let i = keep; i < memories.length; i++) {
      const memory = memories[i];
      const prior = typeof memory === "object" && memory !== null ? this.#slotOf.get(memory) : undefined;
      // A slot still in use holds this very object's value: slots are never rewritten.
      const slot = prior !== undefined && account.uses.has(prior) ? prior : next++;
      if (slot !== prior) fresh.push([slot, memory]);
      tail.push(slot);
      if (delta) bump(delta, slot, 1);
    }
    let runs = appendRuns(prefixRuns(account.runs, was, keep), tail);
    let gathered = false;
    if (runs.length > MAX_RUNS) {
      // Scattered by edits: gather every memory into one run of new slots.
      gathered = true;
      fresh = memories.map((memory) => [next++, memory]);
      tail = fresh.map(([slot]) => slot);
      runs = runsOf(tail);
    }
    // Retained, the turn log's pruning removes the slots nothing uses any more.
    if (retain) void 0;
    else if (gathered) for (const slot of account.uses.keys()) this.#db.removeSync([this.#actorId, slot]);
    // A slot this commit stops using goes, unless another place still uses it.
    else if (delta) for (const [slot, by] of delta) if (by < 0 && (account.uses.get(slot) ?? 0) + by <= 0) this.#db.removeSync([this.#actorId, slot]);
    for (const [slot, memory] of fresh) this.#db.putSync([this.#actorId, slot], memory);

    const { memories: _memories, ...header } = wm;
    const logged: LoggedWorkingMemory = { ...header, memoryCount: memories.length, memoryRuns: runs, memoryNext: next };
    return {
      record: { ...state, workingMemory: logged },
      written: () => {
        for (const [slot, memory] of fresh) if (typeof memory === "object" && memory !== null) this.#slotOf.set(memory, slot);
        if (gathered) {
          this.#took(memories, { slots: tail, runs, uses: new Map(tail.map((slot) => [slot, 1])), next });
          return;
        }
        account.slots.length = keep;
        for (const slot of tail) account.slots.push(slot);
        if (delta) {
          for (const [slot, by] of delta) {
            const uses = (account.uses.get(slot) ?? 0) + by;
            if (uses > 0) account.uses.set(slot, uses);
            else account.uses.delete(slot);
          }
        } else for (const slot of tail) account.uses.set(slot, (account.uses.get(slot) ?? 0) + 1);
        this.#took(memories, { ...account, runs, next });
      },
    };
  }

  /** A write failed, or the actor was destroyed: what the log holds is read back next time. */
  forget(): void {
    this.#known = undefined;
    this.#account = undefined;
    this.#slotOf = new WeakMap();
  }

  /** The memories a commit of `state` would write at most, for the map-size check. */
  changed(state: ActorState): readonly unknown[] {
    const wm = state.workingMemory;
    if (!hasMemoryArray(wm)) return [];
    return wm.memories.slice(sharedPrefix(this.#known?.deref() ?? [], wm.memories));
  }

  #took(memories: readonly unknown[] | undefined, account: Account): void {
    this.#known = memories === undefined ? undefined : new WeakRef(memories);
    this.#account = account;
  }

  #accountIn(record: ActorState | undefined): Account {
    const wm = record?.workingMemory;
    return isLogged(wm) ? accountOf(this.#actorId, wm) : emptyAccount();
  }

  #read(slots: readonly number[]): unknown[] {
    const memories: unknown[] = [];
    const found = new Map<number, unknown>();
    // One range read per run: the common layout is a run or two.
    for (const [first, length] of runsOf(slots)) {
      for (const { key, value } of this.#db.getRange({ start: [this.#actorId, first], end: [this.#actorId, first + length] })) {
        found.set((key as [string, number])[1], value);
      }
    }
    for (const slot of slots) {
      if (!found.has(slot)) {
        throw new StoreError(`working memory of actor ${this.#actorId} is incomplete in LMDB: memory slot ${slot} is missing (${found.size} of ${new Set(slots).size} found)`);
      }
      const memory = found.get(slot);
      if (typeof memory === "object" && memory !== null) this.#slotOf.set(memory, slot);
      memories.push(memory);
    }
    return memories;
  }
}
