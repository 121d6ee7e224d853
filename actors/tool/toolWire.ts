import { Packr } from "msgpackr";
import { z } from "zod";
import { decodePlainMsgpack, formatIssues, redactSecrets } from "../../runtime/bus/index.ts";

/**
 * The bodies of a tool call on `ensoul.<cluster>.tool.<name>.call` (docs/PROTOCOL.md, "Tool
 * actors"): plain msgpack maps, not envelopes, because a call is a request/reply between a
 * soul's node and whoever serves the tool, already verified by the soul's gates, and an
 * outside process should need nothing but NATS and msgpack to serve one. Received bodies are
 * checked on the bytes by §4's one checker, as envelopes are (runtime/bus plainMsgpack.ts).
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

const replySchema = z.discriminatedUnion("ok", [
  z.object({ v: z.literal(1), ok: z.literal(true), value: z.custom<unknown>((v) => v !== undefined, { error: "missing (nil stands for no value)" }) }),
  z.object({ v: z.literal(1), ok: z.literal(false), error: z.object({ kind: z.enum(["input", "error", "timeout", "malformed"]), message: z.string() }) }),
]);

const packr = new Packr({ useRecords: false, variableMapSize: true, moreTypes: false, structuredClone: false, encodeUndefinedAsNil: true });

export function encodeToolBody(body: ToolCallRequest | ToolCallReply): Uint8Array {
  return packr.pack(body);
}

/** Decodes one body: §4 on the bytes, a map, then the fields, each refusal naming its rule or field. */
function decodeBody<T>(bytes: Uint8Array, root: "request" | "reply", schema: z.ZodType<T>): { ok: true; body: T } | { ok: false; reason: string } {
  const decoded = decodePlainMsgpack(bytes, root);
  if (!decoded.ok) return decoded;
  const what = `tool call ${root}`;
  const raw = decoded.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || raw instanceof Uint8Array) return { ok: false, reason: `not a ${what}: a ${root} is a msgpack map` };
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: `not a ${what}: ${formatIssues(parsed.error, root)}` };
  return { ok: true, body: parsed.data };
}

export function decodeToolRequest(bytes: Uint8Array): { ok: true; request: ToolCallRequest } | { ok: false; reason: string } {
  const decoded = decodeBody(bytes, "request", requestSchema);
  return decoded.ok ? { ok: true, request: decoded.body as ToolCallRequest } : decoded;
}

export function decodeToolReply(bytes: Uint8Array): { ok: true; reply: ToolCallReply } | { ok: false; reason: string } {
  const decoded = decodeBody(bytes, "reply", replySchema);
  return decoded.ok ? { ok: true, reply: decoded.body as ToolCallReply } : decoded;
}

/** Characters a credential is made of: a run of this many or more may be one, and is hidden from a head. */
const LONG_RUN = /[A-Za-z0-9_\-+/=.~]{12,}/g;
/** A byte that is not printable ASCII, shown as a character no credential has (so it breaks a run). */
const NOT_PRINTABLE = /[^\x20-\x7e]/g;
const HEAD_CHARS = 48;

/**
 * What an error may show of a refused body: its first bytes as text (a byte that is not
 * printable ASCII as `·`), with credentials, and any run of 12 or more characters that could be
 * one, hidden before the text is cut short, so a secret that straddles the cut is hidden too.
 * Enough to see the body's shape (`··v··ok··value`), never what it holds.
 */
export function redactedHead(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.subarray(0, 256)).toString("latin1").replace(NOT_PRINTABLE, "·");
  return redactSecrets(text).replace(LONG_RUN, "…").slice(0, HEAD_CHARS);
}
