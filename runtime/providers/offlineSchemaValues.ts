/**
 * JSON values from a JSON schema: what the offline model answers to a `json` format.
 *
 * It exists apart from the offline model because walking a schema ($ref, anyOf/oneOf, allOf,
 * bounds, string formats) is a self-contained concern. Booleans and enum values are judged from
 * what the person said (offlineJudgement.ts: a soul's `mentalQuery` and `decision` branch on
 * them); every other value is seeded from the conversation and the value's path, so the same
 * request always gets the same JSON.
 */
import { fnv1a } from "./offlineChoice.ts";
import type { Conversation } from "./offlineConversation.ts";
import { choose, describedQuestion, judge, quotedStatement } from "./offlineJudgement.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

function asSchema(value: unknown): Schema | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Schema) : undefined;
}

function resolveRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    node = asSchema(node)?.[key];
  }
  return asSchema(node);
}

function schemaType(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") as string | undefined) ?? "null";
  if (schema.properties) return "object";
  if (schema.items || schema.prefixItems) return "array";
  return undefined;
}

export function valueFromSchema(schemaIn: unknown, root: Schema, c: Conversation, path: string, depth: number): Json {
  let schema = asSchema(schemaIn) ?? {};
  for (let hops = 0; typeof schema.$ref === "string" && hops < 16; hops++) {
    schema = resolveRef(schema.$ref, root) ?? {};
  }
  if ("const" in schema) return schema.const as Json;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    // A decision's question is its instruction's description; any other field's, its own.
    return choose(schema.enum as Json[], describedQuestion(c.command) ?? questionOf(schema, path), c);
  }
  const options = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    const nonNull = options.filter((o) => asSchema(o)?.type !== "null");
    return valueFromSchema(nonNull[0] ?? options[0], root, c, path, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged: Schema = {};
    for (const part of schema.allOf) Object.assign(merged, asSchema(part));
    return valueFromSchema(merged, root, c, path, depth + 1);
  }
  switch (schemaType(schema)) {
    case "object":
      return objectFromSchema(schema, root, c, path, depth);
    case "array":
      return arrayFromSchema(schema, root, c, path, depth);
    case "string":
      return stringFromSchema(schema, c, path);
    case "integer":
    case "number":
      return numberFromSchema(schema, c, path, schemaType(schema) === "integer");
    case "boolean":
      // A mentalQuery's statement is quoted in its instruction; any other field states its own.
      return judge(quotedStatement(c.command) ?? questionOf(schema, path), c);
    case "null":
      return null;
    default:
      return stringFromSchema(schema, c, path);
  }
}

function objectFromSchema(schema: Schema, root: Schema, c: Conversation, path: string, depth: number): Json {
  const out: { [key: string]: Json } = {};
  const properties = asSchema(schema.properties) ?? {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [key, sub] of Object.entries(properties)) {
    // Past the depth bound only required properties are filled, so recursive schemas end.
    if (depth >= MAX_DEPTH && !required.has(key)) continue;
    out[key] = valueFromSchema(sub, root, c, `${path}.${key}`, depth + 1);
  }
  return out;
}

function arrayFromSchema(schema: Schema, root: Schema, c: Conversation, path: string, depth: number): Json {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const min = typeof schema.minItems === "number" ? schema.minItems : 0;
  const max = typeof schema.maxItems === "number" ? schema.maxItems : Number.POSITIVE_INFINITY;
  const wanted = depth >= MAX_DEPTH ? min : 1 + (fnv1a(`${c.seed}:${path}#n`) % 3);
  const count = Math.max(prefix.length, Math.min(Math.max(wanted, min), max));
  const out: Json[] = [];
  for (let i = 0; i < count; i++) {
    const itemSchema = i < prefix.length ? prefix[i] : schema.items === false ? undefined : schema.items;
    if (itemSchema === undefined && i >= prefix.length) break;
    out.push(valueFromSchema(itemSchema, root, c, `${path}[${i}]`, depth + 1));
  }
  return out;
}

/** What a field asks: its description, else its name in words (`userIsFrustrated`: "user is frustrated"). */
function questionOf(schema: Schema, path: string): string {
  return typeof schema.description === "string" && schema.description.trim() ? schema.description : humanKey(path);
}

function humanKey(path: string): string {
  const key = /([A-Za-z_][\w]*)(?:\[\d+\])*$/.exec(path)?.[1] ?? "answer";
  return key
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase();
}

function stringFromSchema(schema: Schema, c: Conversation, path: string): string {
  switch (schema.format) {
    case "date-time":
      return new Date(Date.UTC(2024, 0, 1) + (c.seed % 86_400) * 1000).toISOString();
    case "date":
      return "2024-01-01";
    case "email":
      return "offline@example.com";
    case "uri":
    case "url":
      return "https://example.com/offline";
    case "uuid": {
      const h = [0, 1, 2, 3].map((i) => fnv1a(`${c.seed}:${path}:${i}`).toString(16).padStart(8, "0")).join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
    }
  }
  const index = /\[(\d+)\]$/.exec(path)?.[1];
  // An item of `newIdeas` is an "idea".
  const label = index !== undefined ? humanKey(path).replace(/s$/, "") : humanKey(path);
  const numbered = index !== undefined ? ` ${Number(index) + 1}` : "";
  let text = c.said ? `offline ${label}${numbered} about "${c.said}"` : `offline ${label}${numbered}`;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (text.length > max) text = text.slice(0, max);
  while (text.length < min) text += " (offline)".slice(0, min - text.length);
  return text;
}

function numberFromSchema(schema: Schema, c: Conversation, path: string, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  let lo = typeof schema.minimum === "number" ? schema.minimum : undefined;
  let hi = typeof schema.maximum === "number" ? schema.maximum : undefined;
  if (typeof schema.exclusiveMinimum === "number") lo = schema.exclusiveMinimum + step;
  if (typeof schema.exclusiveMaximum === "number") hi = schema.exclusiveMaximum - step;
  if (integer) {
    if (lo !== undefined) lo = Math.ceil(lo);
    if (hi !== undefined) hi = Math.floor(hi);
  }
  lo ??= hi !== undefined ? Math.min(0, hi) : 0;
  hi ??= lo + 10;
  if (hi < lo) return lo;
  const span = integer ? hi - lo + 1 : hi - lo;
  const r = fnv1a(`${c.seed}:${path}`);
  return integer ? lo + (r % Math.max(1, span)) : lo + ((r % 1000) / 1000) * span;
}
