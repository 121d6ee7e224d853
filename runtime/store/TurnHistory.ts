/**
 * One actor's turn log as its readers and the revert see it: entries read back with their
 * working memory (before and after), and a revert to the state after an earlier turn, as one
 * transaction.
 *
 * A revert restores what the entry of that turn kept: working memory, soul memory, process
 * memory, the process and its params, the machine snapshot and the schedules, and undoes the
 * key/value writes (user model versions) made since, newest first, so each key gets the value
 * it had right after that turn. It keeps the turn number (turn numbers never go back: the
 * soul's speech ids contain them and JetStream deduplicates by those), the metadata, the
 * inbox and the outbox (what was heard and said stays heard and said). The revert is itself
 * an entry of the log, with the values it replaced, so a later revert can undo it too.
 */
import type { AtomicWriter } from "./AtomicWriter.ts";
import type { Databases } from "./environment.ts";
import { prefixRange } from "./keys.ts";
import type { MemoryLog } from "./MemoryLog.ts";
import type { TurnLog, TurnLogRecord } from "./TurnLog.ts";
import { StoreError, TurnNotKeptError, type ActorHistory, type ActorState, type LoggedKvWrite, type LoggedTurn, type RevertOutcome, type ScheduledEntry } from "./types.ts";

export class TurnHistory implements ActorHistory {
  readonly #actorId: string;
  readonly #dbs: Databases;
  readonly #writer: AtomicWriter;
  readonly #log: TurnLog;
  readonly #memories: MemoryLog;

  constructor(actorId: string, dbs: Databases, writer: AtomicWriter, log: TurnLog, memories: MemoryLog) {
    this.#actorId = actorId;
    this.#dbs = dbs;
    this.#writer = writer;
    this.#log = log;
    this.#memories = memories;
  }

  /** Turn numbers kept at most. */
  get keep(): number {
    return this.#log.keep;
  }

  bounds(): { oldest?: number; newest?: number } {
    this.#writer.ensureOpen();
    return this.#log.bounds();
  }

  /**
   * Logged commits of at most `limit` turn numbers below `before`, newest first. Read
   * synchronously, so from one LMDB snapshot.
   */
  page(limit: number, before?: number, options: { memories?: boolean } = {}): LoggedTurn[] {
    this.#writer.ensureOpen();
    const records = this.#log.newestFirst(limit, before);
    if (options.memories === false) return records.map((record) => this.#loggedTurn(record, [], null));
    const afters = records.map((r) => this.#memories.memoriesOf((r.state.workingMemory as unknown) ?? null));
    return records.map((record, i) => {
      let memoriesBefore: unknown[] | null;
      if (i + 1 < records.length) memoriesBefore = afters[i + 1] as unknown[];
      else {
        const previous = this.#log.previous(record.turn, record.k);
        memoriesBefore = previous ? this.#memories.memoriesOf(previous.state.workingMemory) : record.turn === 1 && record.k === 0 ? [] : null;
      }
      return this.#loggedTurn(record, afters[i] as unknown[], memoriesBefore);
    });
  }

  /**
   * Rolls the actor back to the state after turn `toTurn`; rejects with a TurnNotKeptError
   * when that turn is not in the log. Call between turns: the soul runtime does (SoulRuntime.revert).
   */
  revertTo(toTurn: number, by: string, at: number): Promise<RevertOutcome> {
    // The state record changes under the memory log: it reads its account back next time.
    this.#memories.forget();
    const reverting = this.#writer.write(`revert actor ${this.#actorId} to turn ${toTurn}`, () => [], () => {
      const current = this.#dbs.state.get([this.#actorId]);
      if (!current) throw new TurnNotKeptError(`actor ${this.#actorId} has no committed turn`);
      const target = this.#log.target(toTurn);
      if (!target) {
        const { oldest, newest } = this.#log.bounds();
        const kept = oldest === undefined ? "none is kept" : `turns ${oldest} to ${newest} are kept`;
        throw new TurnNotKeptError(`turn ${toTurn} of actor ${this.#actorId} is not in its turn log (${kept})`);
      }
      const kv = this.#undoKvSince(target);
      this.#replaceSchedules(target.schedules);
      const { metadata } = current;
      const record: ActorState = { ...target.state, workingMemory: withNextSlot(target.state.workingMemory, current.workingMemory), turn: current.turn, ...(metadata !== undefined ? { metadata } : {}) };
      if (metadata === undefined) delete record.metadata;
      this.#dbs.state.putSync([this.#actorId], record);
      this.#log.appendInTransaction("revert", record, kv, undefined, at, { toTurn, by });
      return { turn: current.turn, toTurn, by, at };
    });
    reverting.catch(() => (this.#memories.forget(), this.#log.forget()));
    return reverting;
  }

  /** Puts back, for every key written since the target, the value it had right after it; returns what it replaced. */
  #undoKvSince(target: TurnLogRecord): LoggedKvWrite[] {
    const restore = new Map<string, LoggedKvWrite>();
    // Newest first, so the oldest write since the target decides: its prior is the target's value.
    for (const entry of this.#log.after(target.turn, target.k)) {
      for (const write of [...entry.kv].reverse()) restore.set(JSON.stringify([write.namespace, ...write.key]), write);
    }
    const replaced: LoggedKvWrite[] = [];
    for (const write of restore.values()) {
      const key = [this.#actorId, write.namespace, ...write.key];
      const now = this.#dbs.kv.get(key);
      replaced.push({ namespace: write.namespace, key: write.key, value: write.had ? write.prior : null, ...(now === undefined ? { had: false } : { had: true, prior: now }) });
      if (write.had) this.#dbs.kv.putSync(key, write.prior);
      else this.#dbs.kv.removeSync(key);
    }
    return replaced;
  }

  #replaceSchedules(schedules: readonly ScheduledEntry[]): void {
    const keys = [...this.#dbs.schedules.getKeys(prefixRange([this.#actorId]))];
    for (const key of keys) this.#dbs.schedules.removeSync(key);
    for (const entry of schedules) this.#dbs.schedules.putSync([this.#actorId, entry.id], entry);
  }

  #loggedTurn(record: TurnLogRecord, memories: unknown[], memoriesBefore: unknown[] | null): LoggedTurn {
    const wm = record.state.workingMemory as Record<string, unknown> | undefined;
    let workingMemory: unknown = wm;
    if (wm && typeof wm === "object") {
      const { memoryCount: _c, memoryRuns: _r, memoryNext: _n, ...header } = wm;
      workingMemory = { ...header, memories };
    }
    const trace = this.#log.trace(record.turn, record.k);
    const out: LoggedTurn = {
      kind: record.kind,
      turn: record.turn,
      k: record.k,
      at: record.at,
      state: { ...record.state, workingMemory },
      memoriesBefore,
      schedules: record.schedules,
      kv: record.kv.map(({ namespace, key, value }) => ({ namespace, key, value })),
      ...(trace !== undefined ? { trace } : {}),
      ...(record.revert ? { revert: record.revert } : {}),
    };
    return out;
  }
}

/**
 * The target's working memory, with the next free slot of the current one: slots are never
 * given twice (MemoryLog), and those given since the target are still used by later entries.
 */
function withNextSlot(target: unknown, current: unknown): unknown {
  const next = (wm: unknown) => (typeof wm === "object" && wm !== null ? (wm as { memoryNext?: unknown }).memoryNext : undefined);
  const now = next(current);
  const then = next(target);
  if (typeof now !== "number" || typeof target !== "object" || target === null) return target;
  return { ...target, memoryNext: Math.max(now, typeof then === "number" ? then : 0) };
}

export function assertRevertTurn(toTurn: unknown): number {
  if (!Number.isSafeInteger(toTurn) || (toTurn as number) < 1) throw new StoreError(`invalid turn ${String(toTurn)}: must be a turn number, 1 or more`);
  return toTurn as number;
}
