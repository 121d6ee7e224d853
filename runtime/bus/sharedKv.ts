/**
 * The cluster's shared key-value state: small JSON values that several souls and clients read,
 * change and watch (`useSharedContext`, docs/PROTOCOL.md, "Shared context"). On NATS it is the
 * JetStream key-value bucket `ensoul_<cluster>_shared` (natsSharedKv.ts); on the in-process
 * bus, a map with the same revisions and watch semantics (memorySharedKv.ts).
 *
 * Every write can be a compare-and-set on the key's revision (`swap`): the write lands only if
 * nobody wrote the key since the revision the writer read, so a read-modify-write that loses
 * a race is retried on fresh data instead of overwriting the winner. A key is
 * `<context>.<key>` in the bucket, both tokens under the bus's name rule, so a context name
 * or a key can never add a subject token or a wildcard.
 */
import { assertName } from "./subjects.ts";

/** A value that is plain JSON: what every client of the bucket, in any language, can read. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Largest value, as UTF-8 JSON: shared context is small state, not a document store. */
export const SHARED_VALUE_MAX_BYTES = 64 * 1024;

export interface SharedEntry {
  /** The key within its context. */
  readonly key: string;
  /** The value; undefined when the key was deleted (its revision is still the delete's). */
  readonly value: JsonValue | undefined;
  /** The write that made this value: increases with every write to the bucket. */
  readonly revision: number;
}

/** A change a watcher sees: a write or a delete (value undefined) of one key of its context. */
export type SharedChangeListener = (entry: SharedEntry) => void;

export interface SharedKv {
  /** `ensoul_<cluster>_shared` on NATS; the same name on the in-process bus. */
  readonly bucket: string;
  /** The key's entry, a deleted key's too (value undefined); undefined if it was never written. */
  get(context: string, key: string): Promise<SharedEntry | undefined>;
  /** Every key of a context that holds a value (deleted keys left out), in key order. */
  entries(context: string): Promise<SharedEntry[]>;
  /**
   * Compare-and-set: writes `value` (undefined deletes) if the key's revision is still
   * `revision` (0: the key was never written), and resolves to the new revision. Otherwise
   * it rejects with SharedConflictError and writes nothing.
   */
  swap(context: string, key: string, value: JsonValue | undefined, revision: number): Promise<number>;
  /**
   * Changes to a context's keys made after the returned promise resolves, in revision order,
   * until the returned function is called. A watcher sees every write (possibly coalesced
   * only by the bus closing), its own included.
   */
  watch(context: string, listener: SharedChangeListener): Promise<() => void>;
}

/** The key changed since the revision the writer read: read it again and retry. */
export class SharedConflictError extends Error {
  constructor(
    readonly context: string,
    readonly key: string,
    readonly expected: number,
    detail = "read it again and retry",
  ) {
    super(`shared context '${context}': key '${key}' changed since revision ${expected}; ${detail}`);
    this.name = "SharedConflictError";
  }
}

export function isSharedConflict(err: unknown): err is SharedConflictError {
  return err instanceof SharedConflictError;
}

/** The bucket of a cluster's shared contexts. Bucket names are `[A-Za-z0-9_-]`, which cluster names already are. */
export function sharedBucketName(cluster: string): string {
  return `ensoul_${assertName("cluster", cluster)}_shared`;
}

/** The bucket key of one key of one context, both checked by the token rule. */
export function sharedKey(context: string, key: string): string {
  return `${assertName("shared context", context)}.${assertName("shared key", key)}`;
}

/**
 * The value as the bucket stores it (UTF-8 JSON), after checking it is plain JSON: JSON.stringify
 * would quietly turn NaN into null, drop undefined and functions, and make `{}` of a Map, and a
 * reader elsewhere would see something else than the writer meant.
 */
export function encodeSharedValue(context: string, key: string, value: unknown): Uint8Array {
  assertJson(value, `${context}.${key}`, 0);
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  if (bytes.length > SHARED_VALUE_MAX_BYTES) {
    throw new RangeError(`shared context '${context}': the value of '${key}' is ${bytes.length} bytes of JSON, over the limit of ${SHARED_VALUE_MAX_BYTES}`);
  }
  return bytes;
}

/** The value of a bucket entry; `where` names it in the error when another client stored something that is not JSON. */
export function decodeSharedValue(bytes: Uint8Array, where = "a shared value"): JsonValue {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as JsonValue;
  } catch (err) {
    throw new TypeError(`${where} is not UTF-8 JSON (${bytes.length} bytes; written by a client that does not follow docs/PROTOCOL.md?)`, { cause: err });
  }
}

function assertJson(value: unknown, path: string, depth: number): void {
  if (depth > 32) throw new TypeError(`shared value ${path} is nested deeper than 32 levels`);
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`shared value ${path} is ${value}: only finite numbers are JSON`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => assertJson(v, `${path}[${i}]`, depth + 1));
    return;
  }
  if (typeof value === "object" && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)) {
    for (const [k, v] of Object.entries(value)) assertJson(v, `${path}.${k}`, depth + 1);
    return;
  }
  const what = typeof value === "object" ? (value.constructor?.name ?? "object") : typeof value;
  throw new TypeError(`shared value ${path} is ${what}: shared context holds plain JSON (null, booleans, finite numbers, strings, arrays, plain objects)`);
}
