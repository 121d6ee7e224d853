/**
 * Keys and the names that go into them. Every key is an ordered array that starts with the
 * actor id, so one actor's entries are contiguous in every database and a range scan over
 * `[actorId, ...]` sees that actor and nobody else.
 *
 * Actor ids follow the same token rule as bus subjects, `[A-Za-z0-9_-]{1,128}`: an id from
 * the outside world can never reach another actor's keyspace, and the rule guarantees the
 * prefix property below (no id contains the 0x00 delimiter lmdb uses between elements).
 */
import { StoreError } from "./types.ts";

export const ACTOR_ID_MAX_LENGTH = 128;
/** Envelope, outbox and schedule ids are chosen by other systems (ULIDs, turn ids), so they are freer. */
export const ENTRY_ID_MAX_LENGTH = 256;

const TOKEN = /^[A-Za-z0-9_-]+$/;
// Control characters would corrupt array keys (0x00 is lmdb's element delimiter) and logs.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * lmdb's ordered-binary encoding compares byte by byte, and no string or number element
 * ever starts with 0xff (its README documents this), so `[...prefix, 0xff]` sorts after
 * every key that extends `prefix` and before the next prefix.
 */
const AFTER_ALL = Buffer.from([0xff]);

export type KeyPart = string | number;
/** What lmdb accepts as an array key; the Buffer only ever appears as the range end. */
export type LmdbKey = (string | number | Buffer)[];

function describe(value: unknown): string {
  if (typeof value !== "string") return `${typeof value}`;
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(shown);
}

/** Returns the id if it is a valid actor id; throws a StoreError that says what is wrong. */
export function assertActorId(id: unknown): string {
  return assertToken("actor id", id);
}

/** The token rule, shared by actor ids and kv namespaces. */
export function assertToken(field: string, value: unknown): string {
  if (typeof value !== "string") throw new StoreError(`invalid ${field} ${describe(value)}: must be a string`);
  if (value.length === 0) throw new StoreError(`invalid ${field} "": must not be empty`);
  if (value.length > ACTOR_ID_MAX_LENGTH) {
    throw new StoreError(`invalid ${field} ${describe(value)}: must be at most ${ACTOR_ID_MAX_LENGTH} characters, got ${value.length}`);
  }
  if (!TOKEN.test(value)) {
    const bad = [...value].find((ch) => !TOKEN.test(ch)) ?? "";
    throw new StoreError(`invalid ${field} ${describe(value)}: may contain only A-Z a-z 0-9 _ - (found ${JSON.stringify(bad)})`);
  }
  return value;
}

/** Inbox, outbox and schedule ids: any printable string up to 256 characters. */
export function assertEntryId(field: string, id: unknown): string {
  if (typeof id !== "string") throw new StoreError(`invalid ${field} ${describe(id)}: must be a string`);
  if (id.length === 0) throw new StoreError(`invalid ${field} "": must not be empty`);
  if (id.length > ENTRY_ID_MAX_LENGTH) {
    throw new StoreError(`invalid ${field} ${describe(id)}: must be at most ${ENTRY_ID_MAX_LENGTH} characters, got ${id.length}`);
  }
  if (CONTROL.test(id)) throw new StoreError(`invalid ${field} ${describe(id)}: must not contain control characters`);
  return id;
}

/** A kv key part: a printable string or a finite number. */
export function assertKeyPart(part: unknown): KeyPart {
  if (typeof part === "number") {
    if (!Number.isFinite(part)) throw new StoreError(`invalid kv key part ${part}: numbers must be finite`);
    return part;
  }
  if (typeof part === "string") {
    if (CONTROL.test(part)) throw new StoreError(`invalid kv key part ${describe(part)}: must not contain control characters`);
    return part;
  }
  throw new StoreError(`invalid kv key part ${describe(part)}: must be a string or a number`);
}

/** Bounds of a range scan that covers `prefix` and every key that extends it. */
export function prefixRange(prefix: readonly KeyPart[]): { start: LmdbKey; end: LmdbKey } {
  return { start: [...prefix], end: [...prefix, AFTER_ALL] };
}

/**
 * lmdb returns a one-element array key as its bare element (`[id]` and `id` encode the
 * same), so key readers go through this.
 */
export function keyParts(key: unknown): KeyPart[] {
  if (Array.isArray(key)) return key as KeyPart[];
  return [key as KeyPart];
}
