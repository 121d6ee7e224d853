import type {
  ActorState,
  ActorStore,
  InboxEntry,
  KvReadEntry,
  OutboxEntry,
  ScheduledEntry,
  TurnCommit,
} from "../../runtime/store/index.ts";

/**
 * An ActorStore that keeps everything in memory: for benchmarks that measure the soul
 * without LMDB, and for tests of logic that does not care about durability. It follows the
 * contract (atomic turns, duplicate ids dropped, inbox order) but survives nothing.
 */
export function createMemoryActorStore(actorId: string): ActorStore {
  let state: ActorState | undefined;
  let seq = 0;
  const inbox = new Map<string, InboxEntry>();
  const outbox = new Map<string, OutboxEntry>();
  const schedules = new Map<string, ScheduledEntry>();
  /** Key/value namespaces: `namespace -> JSON key -> entry`. */
  const kv = new Map<string, Map<string, KvReadEntry>>();
  const done = Promise.resolve();

  return {
    actorId,
    loadState: () => state,
    commitTurn(commit: TurnCommit) {
      if (commit.inboxDone !== undefined && !inbox.has(commit.inboxDone)) {
        return Promise.reject(new Error(`commitTurn: no inbox entry '${commit.inboxDone}' for ${actorId}`));
      }
      state = commit.state;
      if (commit.inboxDone !== undefined) {
        const entry = inbox.get(commit.inboxDone) as InboxEntry;
        inbox.set(entry.id, { ...entry, status: "done", attempts: entry.attempts + 1 });
      }
      const record = commit.inboxRecord;
      if (record !== undefined) {
        const entry = inbox.get(record.id);
        inbox.set(record.id, entry ? { ...entry, status: "done", attempts: entry.attempts + 1 } : { id: record.id, perception: record.perception, status: "done", attempts: 1, receivedAt: Date.now(), seq: seq++ });
      }
      for (const entry of commit.outbox ?? []) outbox.set(entry.id, entry);
      for (const entry of commit.schedulesPut ?? []) schedules.set(entry.id, entry);
      for (const id of commit.schedulesDelete ?? []) schedules.delete(id);
      for (const write of commit.kv ?? []) {
        let ns = kv.get(write.namespace);
        if (!ns) kv.set(write.namespace, (ns = new Map()));
        ns.set(JSON.stringify(write.key), { key: [...write.key], value: write.value });
      }
      return done;
    },
    receive(id, perception) {
      if (inbox.has(id)) return Promise.resolve(false);
      inbox.set(id, { id, perception, status: "pending", attempts: 0, receivedAt: Date.now(), seq: seq++ });
      return Promise.resolve(true);
    },
    markError(id, error) {
      const entry = inbox.get(id);
      if (entry) inbox.set(id, { ...entry, status: "error", error, attempts: entry.attempts + 1 });
      return done;
    },
    inboxEntry: (id) => inbox.get(id),
    pendingInbox: () => [...inbox.values()].filter((e) => e.status === "pending").sort((a, b) => a.seq - b.seq),
    pendingOutbox: () => [...outbox.values()],
    ackOutbox(id) {
      outbox.delete(id);
      return done;
    },
    schedules: () => [...schedules.values()],
    putSchedule(entry) {
      schedules.set(entry.id, entry);
      return done;
    },
    deleteSchedule(id) {
      schedules.delete(id);
      return done;
    },
    kvRange(namespace, prefix) {
      const entries = [...(kv.get(namespace)?.values() ?? [])].filter((e) => prefix.every((part, i) => e.key[i] === part));
      return entries.sort((a, b) => compareKeys(a.key, b.key));
    },
    destroy() {
      kv.clear();
      state = undefined;
      inbox.clear();
      outbox.clear();
      schedules.clear();
      return done;
    },
  };
}

/** LMDB's order for array keys: part by part, numbers before strings, a shorter prefix first. */
function compareKeys(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x === y) continue;
    if (typeof x !== typeof y) return typeof x === "number" ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
