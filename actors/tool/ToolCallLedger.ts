/**
 * Exactly once where it matters: before a non-idempotent tool runs, the call is recorded as
 * started, durably and outside the turn's commit (the turn may never commit: that is the
 * point); once it ends, its result is recorded. A turn run again after a crash makes its calls
 * afresh, in whatever order, and each finds its own record by its call id (toolCallId.ts: the
 * perception, the phase, the tool, the input, the repeat), never another call's.
 *
 * A record is needed only while the turn that made it may be run again: until it commits, or
 * until its perception is set aside with its error (either way the inbox no longer redelivers
 * it). Then `prune` removes it (SoulRuntime does, after each commit and failed turn), so the
 * ledger holds the records of the one turn in flight, not every call the soul ever made.
 */

interface RecordBase {
  tool: string;
  /** `inputDigest` of the input the tool was given (after the gates): a replay needs the same. */
  input: string;
  /** The number of the turn that made the call (the one it commits as), for `prune`. */
  turn?: number;
  ts: number;
}

export type ToolCallRecord = (RecordBase & { state: "started" }) | (RecordBase & { state: "done"; ok: boolean; value: unknown });

export interface ToolCallLedger {
  get(callId: string): ToolCallRecord | undefined;
  /** Resolves once the record is durable. */
  put(callId: string, record: ToolCallRecord): Promise<void>;
  /**
   * Removes the records of the calls of turns `throughTurn` and earlier (with their subprocess
   * phases); resolves with how many it removed. A later turn's are kept: it may still be in flight.
   */
  prune(throughTurn: number): Promise<number>;
}

/** What a call found in the ledger means for it. */
export type RecordedCall =
  /** No record: run it. */
  | { kind: "new" }
  /** It ended before: its outcome is given back, it does not run. */
  | { kind: "replay"; ok: boolean; value: unknown }
  /** It was under way when its turn ended: whether it ran is not known, so it does not run. */
  | { kind: "unknown" }
  /** The record is of another tool or another input under this id: neither replayed nor run. */
  | { kind: "conflict"; reason: string };

/** Reads a non-idempotent call's record: the rules of a turn run again. */
export function recordedCall(record: ToolCallRecord | undefined, tool: string, input: string): RecordedCall {
  if (record === undefined) return { kind: "new" };
  if (record.tool !== tool) return { kind: "conflict", reason: `was recorded for tool ${String(record.tool)}` };
  // A record without an input digest was made by an older ensoul under an id this one never makes.
  if (record.input !== input) return { kind: "conflict", reason: "was recorded with another input" };
  if (record.state === "done") return { kind: "replay", ok: record.ok, value: record.value };
  return { kind: "unknown" };
}

/** The namespace of the soul's kv keyspace that holds its tool calls. */
export const TOOL_CALLS_NAMESPACE = "toolCalls";

/** The number in a turn id, `<soulId>:<turn>` or `<soulId>:<turn>:sub` (TurnRunner, SubprocessPhase; a soul id has no `:`). */
export function turnNumberOf(turnId: string): number | undefined {
  const match = /^[^:]+:(\d+)(?::sub)?$/.exec(turnId);
  return match ? Number(match[1]) : undefined;
}

/**
 * The turn number of a call id of the old form, `<soulId>:<turn>[:sub]:tool:<n>` (before call
 * ids named the call), so a record an older ensoul left is still pruned. Undefined for any
 * other id: prune leaves a record with neither this nor a `turn` alone rather than guess.
 */
export function turnOfCall(callId: string): number | undefined {
  const match = /^([^:]+:\d+(?::sub)?):tool:\d+$/.exec(callId);
  return match ? turnNumberOf(match[1]!) : undefined;
}

const prunable = (callId: unknown, record: unknown, throughTurn: number): boolean => {
  const recorded = (record as Partial<ToolCallRecord> | undefined)?.turn;
  const turn = typeof recorded === "number" ? recorded : typeof callId === "string" ? turnOfCall(callId) : undefined;
  return turn !== undefined && turn <= throughTurn;
};

/** What an LMDB actor store offers (runtime/store KvNamespace); a store without it gets a memory ledger. */
interface KvStore {
  kv(namespace: string): {
    get(key: string[]): unknown;
    put(key: string[], value: unknown): Promise<void>;
    delete(key: string[]): Promise<boolean>;
    range(): { key: unknown[]; value: unknown }[];
  };
}

const memoryLedgers = new WeakMap<object, ToolCallLedger>();

/**
 * The ledger of a soul's store: its `toolCalls` kv namespace when the store has one (LMDB),
 * else one kept in memory for as long as the store object lives (tests, in-memory souls,
 * which cannot survive a crash anyway).
 */
export function ledgerOf(store: object): ToolCallLedger {
  const kv = (store as Partial<KvStore>).kv;
  if (typeof kv === "function") {
    const ns = kv.call(store, TOOL_CALLS_NAMESPACE);
    return {
      get: (id) => ns.get([id]) as ToolCallRecord | undefined,
      put: (id, record) => ns.put([id], record),
      async prune(throughTurn) {
        // The namespace holds little (it is pruned at every commit), so reading it whole is cheap.
        const stale = ns.range().filter((e) => prunable(e.key[0], e.value, throughTurn));
        const removed = await Promise.all(stale.map((e) => ns.delete([e.key[0] as string])));
        return removed.filter(Boolean).length;
      },
    };
  }
  let ledger = memoryLedgers.get(store);
  if (!ledger) {
    const map = new Map<string, ToolCallRecord>();
    ledger = {
      get: (id) => map.get(id),
      put: async (id, record) => void map.set(id, record),
      async prune(throughTurn) {
        const stale = [...map].filter(([id, record]) => prunable(id, record, throughTurn));
        for (const [id] of stale) map.delete(id);
        return stale.length;
      },
    };
    memoryLedgers.set(store, ledger);
  }
  return ledger;
}
