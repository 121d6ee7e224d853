/**
 * Every committed turn's state, kept so a soul can be rolled back to it (the debugger's
 * revert) and its turns read back with what happened in them (the debugger's timeline).
 *
 * Each turn commit with a `log` writes, in the same transaction, an entry under
 * `[actorId, turn, k]` in the `turns` database: the state record as written (its working
 * memory as slot runs, see MemoryLog), the schedules after the turn, and the turn's key/value
 * writes with the values they replaced (so they can be undone). `k` orders the entries of one
 * turn number: the turn itself is 0, what its subprocesses commit after it and the reverts
 * made before the next turn follow. The turn's trace (prompts, steps, decisions: opaque to the
 * store) goes under the same key in `turnTraces`, a compressed database, so pruning reads the
 * small entries only.
 *
 * Why working memory costs little: memories live in the `memories` database one per slot and
 * a slot is never rewritten (MemoryLog), so an entry needs only the slot runs. With the log on,
 * MemoryLog leaves slots the current state no longer uses where they are; pruning removes the
 * slots no kept entry and not the current state uses. A turn then costs its new memories once,
 * plus its entry.
 *
 * Pruning keeps the newest `keep` entries of turn numbers (and drops those older than
 * `maxAgeMs`), never the latest. It runs in a commit's transaction once the log has grown half
 * `keep` past it, so its cost (reading the kept entries' runs) is spread over many turns.
 */
import type { Database, Key } from "lmdb";
import type { Databases } from "./environment.ts";
import { keyParts, prefixRange, type LmdbKey } from "./keys.ts";
import type { ActorState, KvWrite, LoggedKvWrite, ScheduledEntry, TurnLogEntry, TurnLogKind } from "./types.ts";

/** An entry read back, with its place in the log. */
export interface TurnLogRecord extends TurnLogEntry {
  k: number;
}

/** Slot runs as the state record keeps them (`[first, length]`). */
type Run = [number, number];

/** The slot runs a state record's working memory uses (none for a state without a logged memory). */
function runsOf(state: ActorState | undefined): Run[] {
  const wm = state?.workingMemory as { memoryRuns?: unknown; memoryCount?: unknown } | undefined;
  if (!wm || typeof wm !== "object") return [];
  if (Array.isArray(wm.memoryRuns)) return wm.memoryRuns as Run[];
  // The older layout: slots 0..count-1.
  return typeof wm.memoryCount === "number" && wm.memoryCount > 0 ? [[0, wm.memoryCount]] : [];
}

function addSlots(into: Set<number>, runs: readonly Run[]): void {
  for (const [first, length] of runs) for (let i = 0; i < length; i++) into.add(first + i);
}

export class TurnLog {
  readonly #actorId: string;
  readonly #turns: Database<TurnLogEntry, Key>;
  readonly #traces: Database<unknown, Key>;
  readonly #memories: Database<unknown, Key>;
  readonly #kv: Database<unknown, Key>;
  readonly #schedules: Database<ScheduledEntry, Key>;
  readonly keep: number;
  readonly #maxAgeMs: number | undefined;
  /** Distinct turn numbers in the log, when known (this handle is its actor's only writer). */
  #count: number | undefined;
  /** The newest entry's place, when known: the next one's `k` without a read. */
  #last: { turn: number; k: number } | undefined;

  constructor(actorId: string, dbs: Databases, options: { keep: number; maxAgeMs?: number | undefined }) {
    this.#actorId = actorId;
    this.#turns = dbs.turns;
    this.#traces = dbs.turnTraces;
    this.#memories = dbs.memories;
    this.#kv = dbs.kv;
    this.#schedules = dbs.schedules;
    this.keep = options.keep;
    this.#maxAgeMs = options.maxAgeMs;
  }

  get enabled(): boolean {
    return this.keep > 0;
  }

  /** The values the commit's kv writes will replace. Call inside the transaction, before the writes. */
  priorsOf(writes: readonly KvWrite[]): LoggedKvWrite[] {
    return writes.map((w) => {
      const key = [this.#actorId, w.namespace, ...w.key];
      const prior = this.#kv.get(key);
      return prior === undefined ? { ...w, had: false } : { ...w, had: true, prior };
    });
  }

  /** Appends an entry for `record` (the state as just written). Call inside the transaction, after the commit's writes. */
  appendInTransaction(kind: TurnLogKind, record: ActorState, kv: LoggedKvWrite[], trace: unknown, at: number, revert?: TurnLogEntry["revert"]): void {
    const turn = record.turn;
    const k = this.#nextK(turn);
    // A plain loop: the range's `.map` wraps the iterator in one more lazy iterable per commit.
    const schedules: ScheduledEntry[] = [];
    for (const { value } of this.#schedules.getRange(prefixRange([this.#actorId]))) schedules.push(value);
    const entry: TurnLogEntry = { kind, turn, at, state: record, schedules, kv, ...(revert ? { revert } : {}) };
    this.#turns.putSync([this.#actorId, turn, k], entry);
    if (trace !== undefined) this.#traces.putSync([this.#actorId, turn, k], trace);
    if (k === 0 && this.#count !== undefined) this.#count++;
    this.#last = { turn, k };
    this.#pruneIfDue(record, at);
  }

  /** The actor has entries in the log: their memories must stay until pruned. */
  hasEntries(): boolean {
    if (!this.enabled) return false;
    this.#count ??= this.#countTurns();
    return this.#count > 0;
  }

  /** Forgets what it counted: a write failed, or the actor was replaced. */
  forget(): void {
    this.#count = undefined;
    this.#last = undefined;
  }

  /** Oldest and newest turn numbers kept. */
  bounds(): { oldest?: number; newest?: number } {
    const range = this.#range();
    const first = [...this.#turns.getKeys({ ...range, limit: 1 })][0];
    const last = [...this.#turns.getKeys({ ...range, reverse: true, limit: 1, start: range.end, end: range.start })][0];
    return first === undefined ? {} : { oldest: keyParts(first)[1] as number, newest: keyParts(last)[1] as number };
  }

  /** Entries newest first (turn numbers below `before`, if given): at most `limit` turn numbers, with every entry of each. */
  newestFirst(limit: number, before?: number): TurnLogRecord[] {
    const range = this.#range();
    const start = before === undefined ? range.end : [this.#actorId, before];
    const out: TurnLogRecord[] = [];
    const turns = new Set<number>();
    for (const { key, value } of this.#turns.getRange({ start, end: range.start, reverse: true })) {
      const [, turn, k] = keyParts(key) as [string, number, number];
      if (!turns.has(turn) && turns.size === limit) break;
      turns.add(turn);
      out.push({ ...value, k });
    }
    return out;
  }

  /** The entry just before this one in the log, if kept. */
  previous(turn: number, k: number): TurnLogRecord | undefined {
    for (const { key, value } of this.#turns.getRange({ start: [this.#actorId, turn, k], end: this.#range().start, reverse: true, limit: 2 })) {
      const [, t, kk] = keyParts(key) as [string, number, number];
      if (t === turn && kk === k) continue;
      return { ...value, k: kk };
    }
    return undefined;
  }

  trace(turn: number, k: number): unknown {
    return this.#traces.get([this.#actorId, turn, k]);
  }

  /**
   * The entry holding the state after turn `turn`: its last entry before any revert made at
   * that turn number (a turn's subprocesses belong to it; a revert is a later event).
   */
  target(turn: number): TurnLogRecord | undefined {
    let found: TurnLogRecord | undefined;
    for (const { key, value } of this.#turns.getRange(prefixRange([this.#actorId, turn]))) {
      if (value.kind === "revert") break;
      found = { ...value, k: keyParts(key)[2] as number };
    }
    return found;
  }

  /** Entries after the given one, newest first: what a revert to it undoes. */
  after(turn: number, k: number): TurnLogRecord[] {
    const out: TurnLogRecord[] = [];
    for (const { key, value } of this.#turns.getRange({ start: this.#range().end, end: [this.#actorId, turn, k], reverse: true })) {
      const [, t, kk] = keyParts(key) as [string, number, number];
      if (t === turn && kk === k) break;
      out.push({ ...value, k: kk });
    }
    return out;
  }

  #range(): { start: LmdbKey; end: LmdbKey } {
    return prefixRange([this.#actorId]);
  }

  #nextK(turn: number): number {
    const known = this.#last;
    // Turn numbers only grow, and this handle is its actor's only writer: the last entry it wrote is the newest.
    if (known !== undefined && known.turn <= turn) return known.turn === turn ? known.k + 1 : 0;
    const ofTurn = prefixRange([this.#actorId, turn]);
    const last = [...this.#turns.getKeys({ start: ofTurn.end, end: ofTurn.start, reverse: true, limit: 1 })][0];
    return last === undefined ? 0 : (keyParts(last)[2] as number) + 1;
  }

  #countTurns(): number {
    const turns = new Set<number>();
    for (const key of this.#turns.getKeys(this.#range())) turns.add(keyParts(key)[1] as number);
    return turns.size;
  }

  #pruneIfDue(current: ActorState, now: number): void {
    this.#count ??= this.#countTurns();
    // Each prune reads every kept entry: a slack of half `keep` makes that three reads a turn, spread out.
    const slack = Math.max(8, Math.ceil(this.keep / 2));
    const byCount = this.#count > this.keep + slack;
    let byAge = false;
    if (!byCount && this.#maxAgeMs !== undefined) {
      const oldest = [...this.#turns.getRange({ ...this.#range(), limit: 1 })][0];
      // Checked against the oldest alone, and only once it is well past the age: prunes come in batches here too.
      byAge = oldest !== undefined && oldest.value.at < now - this.#maxAgeMs * 1.25 && this.#count > 1;
    }
    if (byCount || byAge) this.#prune(current, now);
  }

  /** Drops what is past `keep` or `maxAgeMs` (never the latest turn), then the slots nothing kept uses. */
  #prune(current: ActorState, now: number): void {
    const entries = [...this.#turns.getRange(this.#range())].map(({ key, value }) => ({ key: keyParts(key), value }));
    const turnNumbers = [...new Set(entries.map((e) => e.key[1] as number))];
    const latest = turnNumbers[turnNumbers.length - 1];
    const keepFrom = turnNumbers[Math.max(0, turnNumbers.length - this.keep)] as number;
    const cutoff = this.#maxAgeMs === undefined ? -Infinity : now - this.#maxAgeMs;
    const used = new Set<number>();
    addSlots(used, runsOf(current));
    let count = 0;
    const seen = new Set<number>();
    for (const { key, value } of entries) {
      const turn = key[1] as number;
      const drop = turn !== latest && (turn < keepFrom || value.at < cutoff);
      if (drop) {
        this.#turns.removeSync(key as Key);
        this.#traces.removeSync(key as Key);
      } else {
        addSlots(used, runsOf(value.state));
        if (!seen.has(turn)) (seen.add(turn), count++);
      }
    }
    this.#count = count;
    const stale = [...this.#memories.getKeys(this.#range())].filter((key) => !used.has(keyParts(key)[1] as number));
    for (const key of stale) this.#memories.removeSync(key);
  }
}
