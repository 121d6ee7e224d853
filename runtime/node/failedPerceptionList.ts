/**
 * The perceptions of a soul whose turn failed, as node control lists them (`memory`, `turns`)
 * and `ensoul memory` reads them from disk: each set aside in the inbox with its reason (the
 * message, and where the soul's own code threw: actors/soul/FailedTurn.ts) and its attempts,
 * never answered and never dropped.
 */
import type { LmdbActorStore } from "../store/index.ts";
import type { FailedPerception } from "./controlProtocol.ts";

/** How many `memory` lists at most: the newest, since the oldest are what an operator has seen before. */
export const MAX_FAILED_LISTED = 20;

/** In arrival order; with `limit`, only the newest that many. */
export function failedPerceptionsOf(actor: Pick<LmdbActorStore, "failedInbox">, limit?: number): FailedPerception[] {
  const failed = actor.failedInbox();
  const kept = limit !== undefined ? failed.slice(Math.max(0, failed.length - limit)) : failed;
  return kept.map(({ id, perception, error, attempts, receivedAt }) => ({ id, perception, ...(error !== undefined ? { error } : {}), attempts, receivedAt }));
}
