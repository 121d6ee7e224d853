/**
 * Exactly once where it matters: before a non-idempotent tool runs, the call is recorded as
 * started, durably and outside the turn's commit (the turn may never commit: that is the
 * point); once it ends, its result is recorded. A turn re-run after a crash makes the same
 * calls with the same ids (`${turnId}:tool:${n}`), and finds them here.
 */

export type ToolCallRecord =
  | { state: "started"; tool: string; ts: number }
  | { state: "done"; tool: string; ts: number; ok: boolean; value: unknown };

export interface ToolCallLedger {
  get(callId: string): ToolCallRecord | undefined;
  /** Resolves once the record is durable. */
  put(callId: string, record: ToolCallRecord): Promise<void>;
}

/** The namespace of the soul's kv keyspace that holds its tool calls. */
export const TOOL_CALLS_NAMESPACE = "toolCalls";

/** What an LMDB actor store offers (runtime/store KvNamespace); a store without it gets a memory ledger. */
interface KvStore {
  kv(namespace: string): { get(key: string[]): unknown; put(key: string[], value: unknown): Promise<void> };
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
    return { get: (id) => ns.get([id]) as ToolCallRecord | undefined, put: (id, record) => ns.put([id], record) };
  }
  let ledger = memoryLedgers.get(store);
  if (!ledger) {
    const map = new Map<string, ToolCallRecord>();
    ledger = { get: (id) => map.get(id), put: async (id, record) => void map.set(id, record) };
    memoryLedgers.set(store, ledger);
  }
  return ledger;
}
