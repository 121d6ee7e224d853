import { createHash } from "node:crypto";

/**
 * What names a tool call for ever (docs/PROTOCOL.md §14): the soul, the perception its turn
 * answers, the phase (the turn, or the subprocesses after it), the tool, the input as proposed,
 * and which repeat of that same call in the phase it is. Not the call's position in the turn
 * and not the turn id: a turn run again after a crash may call its tools in another order, and
 * turn ids are shared (a failed perception's next turn has the same one). A perception is
 * answered by one turn (the inbox drops a redelivered id), so a re-run that makes the same call
 * gets the same id, and no other call ever does.
 */
export interface ToolCallIdentity {
  soulId: string;
  /** The perception the turn answers. */
  perceptionId: string;
  phase: ToolCallPhase;
  tool: string;
  /** `inputDigest` of the input as proposed, read by the tool's schema (before the gates; as given if it does not parse). */
  input: string;
  /** How many calls of this tool with this input the phase made before this one (0 for the first). */
  occurrence: number;
}

/** A turn (its executeNow chain and ISM included) or the subprocess phase after its commit. */
export type ToolCallPhase = "turn" | "sub";

/** `<soulId>:tool:<22 base64url characters>`: 132 bits of a SHA-256 over the identity. Opaque: never parsed. */
export function toolCallId(identity: ToolCallIdentity): string {
  const { soulId, perceptionId, phase, tool, input, occurrence } = identity;
  const digest = createHash("sha256").update(JSON.stringify(["ensoul.toolCall.1", soulId, perceptionId, phase, tool, input, occurrence])).digest("base64url");
  return `${soulId}:tool:${digest.slice(0, 22)}`;
}

/**
 * A digest of a value that is the same for equal values whatever their key order (a model
 * writes `{a, b}` or `{b, a}` for one input): SHA-256 over canonical JSON, base64url.
 */
export function inputDigest(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value, new Set())).digest("base64url");
}

/** JSON with sorted keys; what JSON cannot say (bigint, bytes, NaN, a cycle) is tagged so it still tells values apart. */
function canonicalJson(value: unknown, path: Set<object>): string {
  if (value === undefined) return "null";
  if (typeof value === "bigint") return `{"$bigint":"${value}"}`;
  if (typeof value === "number" && !Number.isFinite(value)) return `{"$number":"${value}"}`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? `{"$${typeof value}":null}`;
  if (path.has(value)) return '{"$cycle":null}';
  if (value instanceof Uint8Array) return `{"$bytes":"${Buffer.from(value).toString("base64")}"}`;
  if (value instanceof Date) return `{"$date":${JSON.stringify(Number.isNaN(value.getTime()) ? null : value.toISOString())}}`;
  path.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, path)).join(",")}]`;
    if (value instanceof Map) return `{"$map":${canonicalJson([...value.entries()], path)}}`;
    if (value instanceof Set) return `{"$set":${canonicalJson([...value], path)}}`;
    // As JSON: a key whose value is undefined is no key (a parsed input drops it too).
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], path)}`).join(",")}}`;
  } finally {
    path.delete(value);
  }
}
