/**
 * Per-actor counters (inbox arrival order, outbox creation order). They live in the `meta`
 * database and are only ever advanced inside a write transaction, where LMDB's single
 * writer makes the read-increment-write atomic: two receives can never draw the same number.
 */
import type { Database, Key } from "lmdb";

/** Advances the actor's counter `name` and returns the new value (the first is 1). Call inside a transaction. */
export function nextSequence(meta: Database<number, Key>, actorId: string, name: string): number {
  const key = [actorId, name];
  const next = (meta.get(key) ?? 0) + 1;
  meta.putSync(key, next);
  return next;
}
