/**
 * What leaves the process for an inspector. Inspection events carry machine contexts, events
 * and actor inputs as they are: working memories that grow every turn, perceptions with
 * whatever a bridge put in their `meta`, and (in an ISM's context) the turn and cognition
 * context it runs in. An inspector needs their shape, not every word, and must never receive
 * anything that looks like a credential.
 */
import { REDACTED, redactSecrets } from "../bus/index.ts";

export { REDACTED };

/** Field names whose string values are never shown. Broad on purpose: a false hit costs a debug value. */
const SECRET_FIELD = /key|token|secret|passw|passphrase|credential|authorization|cookie|bearer/i;

/** Working memories longer than this are shown as their first and last five memories. */
const MEMORY_PREVIEW = 40;
const PREVIEW_EDGE = 5;

/** Deeper than this is cut: contexts are shallow; only object graphs that were never meant to be shown go deeper. */
const MAX_DEPTH = 12;

/** A string longer than this is cut: a prompt or a pasted log is not worth a megabyte per event. */
const MAX_STRING = 4000;

/** A machine's definition (the JSON the inspector draws from) is kept whole. */
const WHOLE_STRINGS = new Set(["definition"]);

function scrubString(value: string, key = ""): string {
  // Credentials by their look, wherever they appear (a user may paste one into a chat).
  const cleaned = redactSecrets(value);
  return cleaned.length > MAX_STRING && !WHOLE_STRINGS.has(key) ? `${cleaned.slice(0, MAX_STRING)}… (${cleaned.length - MAX_STRING} more characters)` : cleaned;
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A JSON-safe copy of any value, as an inspector should see it: key-like fields and
 * credential-looking strings redacted, long memories previewed, functions dropped, cycles
 * and very deep graphs cut, and class instances shown by their `toJSON` or their name only
 * (an object that does not say how to show itself is runtime machinery, not state).
 */
export function sanitizeValue(value: unknown): unknown {
  return scrub(value, "", 0, new WeakSet());
}

function scrub(value: unknown, key: string, depth: number, ancestors: WeakSet<object>): unknown {
  if (value === null || value === undefined) return value;
  switch (typeof value) {
    case "string":
      return key && SECRET_FIELD.test(key) ? REDACTED : scrubString(value, key);
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "boolean":
      return value;
    case "bigint":
      return value.toString();
    case "function":
    case "symbol":
      return undefined;
  }
  let object = value as object;
  if (ancestors.has(object)) return "[circular]";
  if (depth >= MAX_DEPTH) return "[…]";
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    let shown: unknown;
    try {
      shown = toJSON.call(object, key);
    } catch {
      return `[${object.constructor?.name ?? "object"}]`;
    }
    if (shown !== object) {
      ancestors.add(object);
      try {
        return scrub(shown, key, depth, ancestors);
      } finally {
        ancestors.delete(object);
      }
    }
  }
  if (object instanceof Error) return { name: object.name, message: scrubString(object.message) };
  if (object instanceof Map) object = Object.fromEntries(object);
  else if (object instanceof Set) object = [...object];
  else if (!Array.isArray(object) && !isPlain(object)) return `[${object.constructor?.name ?? "object"}]`;

  ancestors.add(value as object);
  try {
    if (Array.isArray(object)) {
      let items: unknown[] = object;
      if (key === "memories" && items.length > MEMORY_PREVIEW) {
        items = [...items.slice(0, PREVIEW_EDGE), `… ${items.length - 2 * PREVIEW_EDGE} more …`, ...items.slice(-PREVIEW_EDGE)];
      }
      // As JSON does: a hole or a function in an array is a null.
      return items.map((item) => scrub(item, "", depth + 1, ancestors) ?? null);
    }
    const out: Record<string, unknown> = {};
    for (const [field, item] of Object.entries(object)) {
      const shown = scrub(item, field, depth + 1, ancestors);
      if (shown !== undefined) out[field] = shown;
    }
    return out;
  } finally {
    ancestors.delete(value as object);
  }
}

/** For the inspector's `sanitizeContext`: a machine's context, ready to leave the process. Actors without one stay without. */
export function sanitizeContext(context: unknown): Record<string, unknown> | undefined {
  if (context === undefined) return undefined;
  const clean = sanitizeValue(context);
  return typeof clean === "object" && clean !== null && !Array.isArray(clean) ? (clean as Record<string, unknown>) : { value: clean };
}

/** For the inspector's `sanitizeEvent`: an event as sent to an actor (a PERCEIVE carries the perception). */
export function sanitizeEvent<T extends { type: string }>(event: T): T {
  const clean = sanitizeValue(event);
  return (typeof clean === "object" && clean !== null ? clean : { type: event.type }) as T;
}
