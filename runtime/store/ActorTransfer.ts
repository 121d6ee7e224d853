/**
 * An actor's records taken out of the store whole, and put back whole: what a soul file
 * (soulFile.ts) is made of. It is the store's own business because it must see every
 * database at once, and because putting an actor back must be one transaction: a soul half
 * imported (its state without its user models, or a replaced soul with the old one's
 * schedules) would be worse than none.
 *
 * What is taken: the committed state (working memory with its memories), the inbox entries
 * not yet done (pending and failed, in arrival order), the outbox entries not yet
 * acknowledged (in creation order), the schedules, and every key/value entry of every
 * namespace. What is not: done inbox entries, which only recognise a redelivery from the
 * source that delivered them (a new place has its own sources), and the per-actor counters,
 * which the restore sets from what it writes.
 */
import type { Databases } from "./environment.ts";
import { assertEntryId, assertKeyPart, assertToken, keyParts, prefixRange, type KeyPart } from "./keys.ts";
import type { MemoryLog } from "./MemoryLog.ts";
import { assertOutboxEntry } from "./Outbox.ts";
import { assertScheduledEntry } from "./Schedules.ts";
import { StoreError, type ActorState, type InboxEntry, type OutboxEntry, type ScheduledEntry } from "./types.ts";

/** One key/value entry of an actor, with its namespace. */
export interface ActorKvEntry {
  namespace: string;
  key: KeyPart[];
  value: unknown;
}

/** An inbox entry as a dump carries it: its arrival order is its place in the list. */
export type DumpedInboxEntry = Omit<InboxEntry, "seq">;

/** Everything the store keeps of one actor that a copy elsewhere needs. */
export interface ActorDump {
  state: ActorState;
  /** Entries not yet done (status pending or error), in arrival order. */
  inbox: DumpedInboxEntry[];
  /** Entries not yet acknowledged, oldest first. */
  outbox: OutboxEntry[];
  /** In the store's order: soonest first, ties by id. */
  schedules: ScheduledEntry[];
  /** Every namespace's entries, in key order (namespace, then key). */
  kv: ActorKvEntry[];
}

/**
 * Reads the dump. Every read here is synchronous, so all of it comes from one LMDB read
 * transaction: a node committing turns meanwhile (this may run in a reader process beside
 * it) cannot give a state from one turn with the schedules of the next.
 */
export function dumpActor(actorId: string, dbs: Databases, memories: MemoryLog): ActorDump | undefined {
  const state = memories.load(dbs.state.get([actorId]));
  if (!state) return undefined;
  const range = prefixRange([actorId]);
  const inbox: DumpedInboxEntry[] = [];
  for (const { value: id } of dbs.inboxQueue.getRange(range)) {
    const entry = dbs.inbox.get([actorId, id]);
    if (entry && entry.status !== "done") {
      const { seq: _seq, ...rest } = entry;
      inbox.push(rest);
    }
  }
  const outbox = [...dbs.outbox.getRange(range)].map(({ value }) => value).sort((a, b) => a.seq - b.seq).map((r) => r.entry);
  const schedules = [...dbs.schedules.getRange(range)]
    .map(({ value }) => value)
    .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const kv = [...dbs.kv.getRange(range)].map(({ key, value }) => {
    const [, namespace, ...rest] = keyParts(key);
    return { namespace: String(namespace), key: rest, value };
  });
  return { state, inbox, outbox, schedules, kv };
}

/** Every check that needs no transaction, so a malformed dump is refused with nothing written. */
export function assertDump(actorId: string, dump: ActorDump): void {
  const what = `restore of actor ${actorId}`;
  if (!Number.isSafeInteger(dump.state?.turn) || dump.state.turn < 0) throw new StoreError(`${what}: state.turn must be a non-negative integer`);
  if (typeof dump.state.currentProcess !== "string") throw new StoreError(`${what}: state.currentProcess must be a string`);
  const unique = (field: string, ids: string[]) => {
    const seen = new Set<string>();
    for (const id of ids) {
      if (seen.has(id)) throw new StoreError(`${what}: ${field} id ${JSON.stringify(id)} appears twice`);
      seen.add(id);
    }
  };
  for (const entry of dump.inbox) {
    assertEntryId("inbox id", entry.id);
    if (entry.status !== "pending" && entry.status !== "error") throw new StoreError(`${what}: inbox entry ${JSON.stringify(entry.id)} must be pending or error, not ${JSON.stringify(entry.status)}`);
  }
  unique("inbox", dump.inbox.map((e) => e.id));
  dump.outbox.forEach(assertOutboxEntry);
  unique("outbox", dump.outbox.map((e) => e.id));
  dump.schedules.forEach(assertScheduledEntry);
  unique("schedule", dump.schedules.map((e) => e.id));
  for (const entry of dump.kv) {
    assertToken("kv namespace", entry.namespace);
    if (entry.key.length === 0) throw new StoreError(`${what}: a kv key in namespace ${entry.namespace} has no parts`);
    entry.key.forEach(assertKeyPart);
  }
}

/** How the existing records of each database are named in the refusal (inboxQueue and meta only echo the others). */
const RECORD_NAMES: Partial<Record<keyof Databases, [one: string, many: string]>> = {
  memories: ["memory", "memories"],
  inbox: ["inbox entry", "inbox entries"],
  outbox: ["outbox entry", "outbox entries"],
  schedules: ["schedule", "schedules"],
  kv: ["kv entry", "kv entries"],
};

/** What the actor has in the store now, for the error that refuses to overwrite it. Call inside the transaction. */
export function describeExisting(actorId: string, dbs: Databases): string | undefined {
  const range = prefixRange([actorId]);
  const found: string[] = [];
  const state = dbs.state.get([actorId]);
  if (state) found.push(`state at turn ${state.turn}`);
  for (const [name, [one, many]] of Object.entries(RECORD_NAMES) as [keyof Databases, [string, string]][]) {
    const count = dbs[name].getKeysCount(range);
    if (count > 0) found.push(`${count} ${count === 1 ? one : many}`);
  }
  // Counters alone (left by a write that was then removed) are no soul, but they are something.
  if (found.length === 0 && dbs.meta.getKeysCount(range) > 0) found.push("sequence counters");
  return found.length > 0 ? found.join(", ") : undefined;
}

/** Removes every key of the actor. Call inside the transaction. */
export function removeActorInTransaction(actorId: string, dbs: Databases): void {
  const range = prefixRange([actorId]);
  for (const db of Object.values(dbs) as Databases[keyof Databases][]) {
    // Collected first: removing under a live cursor would move it.
    const keys = [...db.getKeys(range)];
    for (const key of keys) db.removeSync(key);
  }
}

/**
 * Perceptions already processed, by id, that a restore records as done inbox entries (their
 * perceptions are not kept: the entry only recognises the id), received at `at`. Failover's
 * snapshots carry them, so a rebuilt copy does not answer a perception twice.
 */
export interface DoneInboxIds {
  ids: string[];
  at: number;
}

/** Checks the done ids before any transaction; returns those not among the dump's own entries, each once. */
export function assertDoneIds(actorId: string, dump: ActorDump, done: DoneInboxIds): string[] {
  if (!Array.isArray(done.ids) || !Number.isFinite(done.at)) throw new StoreError(`restore of actor ${actorId}: done ids must be a list, with a time`);
  const seen = new Set(dump.inbox.map((e) => e.id));
  const out: string[] = [];
  for (const id of done.ids) {
    assertEntryId("inbox id", id);
    if (!seen.has(id)) out.push(id), seen.add(id);
  }
  return out;
}

/**
 * Writes the dump into an actor that has no keys (removed first when replacing), and the done
 * ids (checked with assertDoneIds) after its inbox entries. Call inside the transaction, as
 * the body's last write: the memory log takes what it wrote as its own at the end (see
 * MemoryLog.writeInTransaction).
 */
export function restoreInTransaction(actorId: string, dbs: Databases, memories: MemoryLog, dump: ActorDump, done?: DoneInboxIds): void {
  // Nothing of the actor is left, so the log starts from an empty account.
  const { record, written } = memories.writeInTransaction(dump.state, () => undefined);
  dbs.state.putSync([actorId], record);
  dump.inbox.forEach((entry, i) => {
    dbs.inbox.putSync([actorId, entry.id], { ...entry, seq: i + 1 });
    dbs.inboxQueue.putSync([actorId, i + 1], entry.id);
  });
  const doneIds = done?.ids ?? [];
  doneIds.forEach((id, i) => dbs.inbox.putSync([actorId, id], { id, perception: null, status: "done", attempts: 1, receivedAt: done?.at ?? 0, seq: dump.inbox.length + i + 1 }));
  // The counters go on from what was written, so the next arrival sorts after these.
  if (dump.inbox.length + doneIds.length > 0) dbs.meta.putSync([actorId, "inboxSeq"], dump.inbox.length + doneIds.length);
  dump.outbox.forEach((entry, i) => dbs.outbox.putSync([actorId, entry.id], { seq: i + 1, entry }));
  if (dump.outbox.length > 0) dbs.meta.putSync([actorId, "outboxSeq"], dump.outbox.length);
  for (const entry of dump.schedules) dbs.schedules.putSync([actorId, entry.id], entry);
  for (const entry of dump.kv) dbs.kv.putSync([actorId, entry.namespace, ...entry.key], entry.value);
  written();
}
