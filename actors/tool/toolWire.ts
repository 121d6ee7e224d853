import { Packr, Unpackr } from "msgpackr";
import { z } from "zod";

/**
 * The bodies of a tool call on `ensoul.<cluster>.tool.<name>.call` (docs/PROTOCOL.md, "Tool
 * actors"): plain msgpack maps, not envelopes, because a call is a request/reply between a
 * soul's node and whoever serves the tool, already verified by the soul's gates, and an
 * outside process should need nothing but NATS and msgpack to serve one.
 */

export const TOOL_WIRE_VERSION = 1;

export interface ToolCallRequest {
  v: 1;
  /** Names the call for ever: the same when the perception's turn runs again and makes the same call (PROTOCOL.md §14). */
  callId: string;
  soulId: string;
  tool: string;
  input: unknown;
  /** How long the caller waits, so the server can give up at the same time. */
  timeoutMs: number;
}

/** `input`: the input did not parse; `error`: the tool ran and threw; `timeout`: it ran past `timeoutMs`. */
export type ToolErrorKind = "input" | "error" | "timeout" | "malformed";

export type ToolCallReply = { v: 1; ok: true; value: unknown } | { v: 1; ok: false; error: { kind: ToolErrorKind; message: string } };

const requestSchema = z.object({
  v: z.literal(1),
  callId: z.string().min(1).max(512),
  soulId: z.string().min(1).max(256),
  tool: z.string().min(1).max(128),
  input: z.unknown(),
  timeoutMs: z.number().positive(),
});

const replySchema = z.union([
  z.object({ v: z.literal(1), ok: z.literal(true), value: z.unknown() }),
  z.object({ v: z.literal(1), ok: z.literal(false), error: z.object({ kind: z.enum(["input", "error", "timeout", "malformed"]), message: z.string() }) }),
]);

const packr = new Packr({ useRecords: false, variableMapSize: true, moreTypes: false, structuredClone: false, encodeUndefinedAsNil: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number", structuredClone: false });

export function encodeToolBody(body: ToolCallRequest | ToolCallReply): Uint8Array {
  return packr.pack(body);
}

function decode(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: unpackr.unpack(bytes) };
  } catch (err) {
    return { ok: false, reason: `not msgpack: ${err instanceof Error ? err.message : String(err)}` };
  }
}

export function decodeToolRequest(bytes: Uint8Array): { ok: true; request: ToolCallRequest } | { ok: false; reason: string } {
  const raw = decode(bytes);
  if (!raw.ok) return raw;
  const parsed = requestSchema.safeParse(raw.value);
  if (!parsed.success) return { ok: false, reason: `not a tool call request: ${z.prettifyError(parsed.error)}` };
  return { ok: true, request: parsed.data as ToolCallRequest };
}

export function decodeToolReply(bytes: Uint8Array): { ok: true; reply: ToolCallReply } | { ok: false; reason: string } {
  const raw = decode(bytes);
  if (!raw.ok) return raw;
  const parsed = replySchema.safeParse(raw.value);
  if (!parsed.success) return { ok: false, reason: `not a tool call reply: ${z.prettifyError(parsed.error)}` };
  return { ok: true, reply: parsed.data as ToolCallReply };
}
