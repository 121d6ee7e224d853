/**
 * Exactly once where it matters: before a non-idempotent tool runs, the call is recorded as
 * started, durably and outside the turn's commit (the turn may never commit: that is the
 * point); once it ends, its result is recorded. A turn re-run after a crash makes the same
 * calls with the same ids (`${turnId}:tool:${n}`), and finds them here.
 *
 * A record is needed only while the turn that made it may be run again: until it commits, or
 * until its perception is set aside with its error (either way the inbox no longer redelivers
 * it). Then `prune` removes it (SoulRuntime does, after each commit and failed turn), so the
 * ledger holds the records of the one turn in flight, not every call the soul ever made.
 */

export type ToolCallRecord =
  | { state: "started"; tool: string; ts: number }
  | { state: "done"; tool: string; ts: number; ok: boolean; value: unknown };

export interface ToolCallLedger {
  get(callId: string): ToolCallRecord | undefined;
  /** Resolves once the record is durable. */
  put(callId: string, record: ToolCallRecord): Promise<void>;
  /**
   * Removes the records of the calls of turns `throughTurn` and earlier (with their subprocess
   * phases, `<soulId>:<turn>:sub`); resolves with how many it removed. A later turn's are kept:
   * it may still be in flight.
   */
  prune(throughTurn: number): Promise<number>;
}

/** The namespace of the soul's kv keyspace that holds its tool calls. */
export const TOOL_CALLS_NAMESPACE = "toolCalls";

/**
 * The turn number a call id names: `<soulId>:<turn>[:sub]:tool:<n>` (TurnRunner and
 * SubprocessPhase make the turn ids; a soul id has no `:`). Undefined for any other id, which
 * some other host made: prune leaves such a record alone rather than guess its turn.
 */
export function turnOfCall(callId: string): number | undefined {
  const match = /^[^:]+:(\d+)(?::sub)?:tool:\d+$/.exec(callId);
  return match ? Number(match[1]) : undefined;
}

const prunable = (callId: unknown, throughTurn: number): boolean => {
  const turn = typeof callId === "string" ? turnOfCall(callId) : undefined;
  return turn !== undefined && turn <= throughTurn;
};

/** What an LMDB actor store offers (runtime/store KvNamespace); a store without it gets a memory ledger. */
interface KvStore {
  kv(namespace: string): {
    get(key: string[]): unknown;
    put(key: string[], value: unknown): Promise<void>;
    delete(key: string[]): Promise<boolean>;
    range(): { key: unknown[] }[];
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
        const stale = ns.range().filter((e) => prunable(e.key[0], throughTurn));
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
        const stale = [...map.keys()].filter((id) => prunable(id, throughTurn));
        for (const id of stale) map.delete(id);
        return stale.length;
      },
    };
    memoryLedgers.set(store, ledger);
  }
  return ledger;
}
