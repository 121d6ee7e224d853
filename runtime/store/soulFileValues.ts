/**
 * The values a soul file carries, as JSON. The store keeps values with msgpackr (as lmdb-js
 * configures it), which holds more than JSON can: `undefined` (as an object field or an
 * array element), NaN and the infinities, bigints, Dates, byte arrays and Maps. A soul file
 * must give each of them back as it was, or an export, an import and a second export would
 * differ. So each is written as a tagged object, `{"$ensoul": "<kind>", ...}`, and a plain
 * object that happens to have an `$ensoul` field is itself wrapped (`"object"`), so no
 * stored value can pass for a tag. docs/SOUL-FILE.md lists the tags.
 *
 * What msgpackr gives back is all this has to handle: it decodes Sets, RegExps, Errors and
 * class instances to arrays or plain objects, so they never reach here from the store. Any
 * other value (a function, a symbol) is refused with the path where it was found.
 */
import { StoreError } from "./types.ts";

/** The field that marks a tagged value. */
export const TAG = "$ensoul";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const NUMBERS: Record<string, number> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, "-Infinity": Number.NEGATIVE_INFINITY, "-0": -0 };

function tagged(kind: string, fields: Record<string, Json>): Json {
  return { [TAG]: kind, ...fields };
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function numberToJson(value: number): Json {
  if (Number.isFinite(value) && !Object.is(value, -0)) return value;
  return tagged("number", { value: Object.is(value, -0) ? "-0" : String(value) });
}

function objectToJson(value: object, path: string): Json {
  if (Array.isArray(value)) {
    // Array.from visits holes too: a hole reads back as undefined, as msgpackr stores it.
    return Array.from(value as unknown[], (item, i) => toJsonValue(item, `${path}[${i}]`));
  }
  if (value instanceof Date) return tagged("date", { value: Number.isNaN(value.getTime()) ? null : value.toISOString() });
  if (value instanceof Uint8Array) return tagged("bytes", { base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") });
  if (value instanceof Map) {
    return tagged("map", { entries: [...value].map(([k, v], i) => [toJsonValue(k, `${path}<key ${i}>`), toJsonValue(v, `${path}<value ${i}>`)]) });
  }
  if (!isPlainObject(value)) throw new StoreError(`cannot write ${path} to a soul file: a ${value.constructor?.name ?? "non-plain"} object is not a value the store keeps`);
  const out: { [key: string]: Json } = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty, not assignment: a field named __proto__ must stay a field.
    Object.defineProperty(out, key, { value: toJsonValue(item, `${path}.${key}`), enumerable: true, writable: true, configurable: true });
  }
  return Object.hasOwn(value, TAG) ? tagged("object", { value: out }) : out;
}

/** A stored value as JSON, tagging what JSON cannot hold. `path` names it in errors. */
export function toJsonValue(value: unknown, path = "value"): Json {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return numberToJson(value);
    case "bigint":
      return tagged("bigint", { value: value.toString() });
    case "undefined":
      return tagged("undefined", {});
    case "object":
      return value === null ? null : objectToJson(value, path);
    default:
      throw new StoreError(`cannot write ${path} to a soul file: a ${typeof value} is not a value the store keeps`);
  }
}

function field(tag: Record<string, unknown>, name: string, path: string): unknown {
  if (!Object.hasOwn(tag, name)) throw new StoreError(`${path}: the ${JSON.stringify(tag[TAG])} value has no "${name}" field`);
  return tag[name];
}

function string(tag: Record<string, unknown>, name: string, path: string): string {
  const value = field(tag, name, path);
  if (typeof value !== "string") throw new StoreError(`${path}: the "${name}" field of a ${JSON.stringify(tag[TAG])} value must be a string`);
  return value;
}

function fromTag(tag: Record<string, unknown>, path: string): unknown {
  const kind = tag[TAG];
  switch (kind) {
    case "undefined":
      return undefined;
    case "number": {
      const value = string(tag, "value", path);
      if (!Object.hasOwn(NUMBERS, value)) throw new StoreError(`${path}: unknown number ${JSON.stringify(value)} (NaN, Infinity, -Infinity or -0)`);
      return NUMBERS[value];
    }
    case "bigint": {
      const value = string(tag, "value", path);
      if (!/^-?\d+$/.test(value)) throw new StoreError(`${path}: bigint ${JSON.stringify(value)} is not a whole number`);
      return BigInt(value);
    }
    case "date": {
      const value = field(tag, "value", path);
      if (value === null) return new Date(Number.NaN);
      const date = typeof value === "string" ? new Date(value) : new Date(Number.NaN);
      if (Number.isNaN(date.getTime())) throw new StoreError(`${path}: date ${JSON.stringify(value)} is not an ISO 8601 time (or null)`);
      return date;
    }
    case "bytes": {
      const value = string(tag, "base64", path);
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new StoreError(`${path}: bytes are not base64`);
      return new Uint8Array(Buffer.from(value, "base64"));
    }
    case "map": {
      const entries = field(tag, "entries", path);
      if (!Array.isArray(entries) || !entries.every((e) => Array.isArray(e) && e.length === 2)) throw new StoreError(`${path}: a map's entries must be [key, value] pairs`);
      return new Map(entries.map(([k, v], i) => [fromJsonValue(k, `${path}<key ${i}>`), fromJsonValue(v, `${path}<value ${i}>`)]));
    }
    case "object": {
      const value = field(tag, "value", path);
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new StoreError(`${path}: a wrapped object's value must be an object`);
      return plainFromJson(value as Record<string, unknown>, path);
    }
    default:
      throw new StoreError(`${path}: unknown ${TAG} tag ${JSON.stringify(kind)} (this ensoul knows undefined, number, bigint, date, bytes, map, object)`);
  }
}

function plainFromJson(value: Record<string, unknown>, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: fromJsonValue(item, `${path}.${key}`), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** JSON (as JSON.parse gives it) back to the value it stands for. Throws a StoreError naming `path` on a malformed tag. */
export function fromJsonValue(value: unknown, path = "value"): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item, i) => fromJsonValue(item, `${path}[${i}]`));
  const record = value as Record<string, unknown>;
  return Object.hasOwn(record, TAG) ? fromTag(record, path) : plainFromJson(record, path);
}
