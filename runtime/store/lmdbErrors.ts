/**
 * Turns what lmdb-js throws into StoreErrors a node can act on. The one that matters most
 * is a full map: it must say where and what to raise, not "MDB_MAP_FULL".
 */
import { StoreError } from "./types.ts";

/** LMDB's return code for a map that cannot take another page. */
export const MDB_MAP_FULL = -30792;
const ENOSPC = 28;

/**
 * The store refused a write for want of room (its map or its disk is full). Nothing was wrong
 * with what was written: the same write succeeds once there is room, so a caller keeps the
 * work for later instead of failing it for good (a soul leaves the perception pending).
 */
export class StoreFullError extends StoreError {}

/** The message every map-full failure carries, whether the store or LMDB detected it. */
export function mapFullError(path: string, mapSize: number, cause?: unknown): StoreError {
  return new StoreFullError(`LMDB map is full at ${path} (mapSize ${mapSize} bytes); raise store.mapSize`, { cause });
}

function codeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Wraps a failure of `what` (e.g. "commitTurn for actor soul-1"). StoreErrors pass through
 * untouched: they already say what is wrong.
 */
export function translateError(error: unknown, what: string, path: string, mapSize: () => number): StoreError {
  if (error instanceof StoreError) return error;
  const code = codeOf(error);
  const message = messageOf(error);
  if (code === MDB_MAP_FULL || message.includes("MDB_MAP_FULL")) return mapFullError(path, mapSize(), error);
  if (code === ENOSPC || message.includes("ENOSPC") || message.includes("No space left")) {
    return new StoreFullError(`${what} failed: the disk holding ${path} is full`, { cause: error });
  }
  return new StoreError(`${what} failed, nothing was written: ${message}`, { cause: error });
}
