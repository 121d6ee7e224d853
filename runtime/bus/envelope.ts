/**
 * The envelope: what every actor message on the bus is wrapped in. It is a plain msgpack
 * map (msgpackr with records off), so a client in any language with a msgpack library can
 * read and write it; docs/PROTOCOL.md is the contract.
 *
 * Receiving is the dangerous side: bytes come from other processes, other machines,
 * possibly hostile bridges. `decodeEnvelope` therefore never throws: every failure comes
 * back as `{ ok: false, reason }` so the caller can dead-letter it and keep serving.
 * Sending a bad envelope is a bug in our own code, so `encodeEnvelope` throws.
 */
import { Packr } from "msgpackr";
import { z } from "zod";
import { BusError, PayloadTooLargeError } from "./errors.ts";
import { decodePlainMsgpack, MAX_DEPTH } from "./plainMsgpack.ts";
import { nextUlid } from "./ulids.ts";

export { MAX_DEPTH };

export const ENVELOPE_VERSION = 1;
/** Default largest encoded envelope; NATS's own default max_payload is the same 1 MiB. */
export const DEFAULT_MAX_ENVELOPE_BYTES = 1024 * 1024;

export const ENVELOPE_KINDS = ["perception", "whisper", "speech", "event", "proposal", "verdict"] as const;
export type EnvelopeKind = (typeof ENVELOPE_KINDS)[number];

/**
 * Control characters (Unicode Cc: U+0000-U+001F, U+007F-U+009F). Identifiers become LMDB
 * keys (0x00 is its element delimiter), `Nats-Msg-Id` header values (a CR or LF would end the
 * header) and log lines: one with a control character is refused on receipt, not five
 * deliveries later at the inbox.
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
/** An identifier: 1 to `max` characters of any text but control characters (PROTOCOL.md §5). */
const identifier = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !CONTROL_CHARACTER.test(s), { message: "must not contain control characters (U+0000-U+001F, U+007F-U+009F)", abort: true });
const address = identifier(256);
const shortText = identifier(256);
const extras = z.record(z.string(), z.unknown());

export const perceptionBodySchema = z.object({
  /** What happened: "said", "joined", or a scheduled event's name. */
  action: identifier(128),
  content: z.string(),
  /** Who it came from. */
  name: z.string().max(256),
  /** A perception the soul made itself (scheduled events). */
  internal: z.boolean().optional(),
  /** Routes a scheduled perception to a named mental process. */
  process: identifier(128).optional(),
  params: extras.optional(),
  /** Bridge detail (channel, thread, user id): passed through, never interpreted by the bus. */
  meta: extras.optional(),
});

export const whisperBodySchema = z.object({
  content: z.string(),
  /** The daimon (or other actor) that whispered. */
  source: shortText,
});

export const speechBodySchema = z.object({
  proposalId: shortText,
  text: z.string(),
  /** True on the last message of an utterance; earlier ones are streamed chunks. */
  final: z.boolean(),
  /** Order of this message among the turn's speech. */
  seq: z.number().int().nonnegative().optional(),
  /** Index of this chunk within the utterance. */
  chunk: z.number().int().nonnegative().optional(),
});

export const eventBodySchema = z.object({
  type: identifier(128),
  data: z.unknown().optional(),
});

/** Proposals are still settling in the gate work: a discriminator and anything else. */
export const proposalBodySchema = z.looseObject({
  kind: identifier(64),
});

export const VERDICTS = ["pass", "transform", "intercept"] as const;
/** Verdicts likewise: the decision, and whatever the gate attaches (reason, transformed proposal). */
export const verdictBodySchema = z.looseObject({
  verdict: z.enum(VERDICTS),
});

export const bodySchemas = {
  perception: perceptionBodySchema,
  whisper: whisperBodySchema,
  speech: speechBodySchema,
  event: eventBodySchema,
  proposal: proposalBodySchema,
  verdict: verdictBodySchema,
} as const;

export type PerceptionBody = z.infer<typeof perceptionBodySchema>;
export type WhisperBody = z.infer<typeof whisperBodySchema>;
export type SpeechBody = z.infer<typeof speechBodySchema>;
export type EventBody = z.infer<typeof eventBodySchema>;
export type ProposalBody = z.infer<typeof proposalBodySchema>;
export type VerdictBody = z.infer<typeof verdictBodySchema>;
export interface BodyByKind {
  perception: PerceptionBody;
  whisper: WhisperBody;
  speech: SpeechBody;
  event: EventBody;
  proposal: ProposalBody;
  verdict: VerdictBody;
}

interface EnvelopeOf<K extends EnvelopeKind> {
  v: typeof ENVELOPE_VERSION;
  /** Unique and sortable (a ULID unless the sender chose a stable id). */
  id: string;
  kind: K;
  from: string;
  to: string;
  /** Epoch milliseconds when the envelope was made. */
  ts: number;
  /** The id of the envelope that caused this one. */
  causation?: string;
  /** The turn's trace id, shared by everything one turn produces. */
  trace?: string;
  body: BodyByKind[K];
}

/** An envelope of one kind, or (without a type argument) the union over all kinds. */
export type Envelope<K extends EnvelopeKind = EnvelopeKind> = { [P in K]: EnvelopeOf<P> }[K];

const header = {
  v: z.literal(ENVELOPE_VERSION),
  id: identifier(256),
  from: address,
  to: address,
  ts: z.number().int().nonnegative(),
  causation: identifier(256).optional(),
  trace: identifier(256).optional(),
};

export const envelopeSchema = z.discriminatedUnion("kind", [
  z.object({ ...header, kind: z.literal("perception"), body: perceptionBodySchema }),
  z.object({ ...header, kind: z.literal("whisper"), body: whisperBodySchema }),
  z.object({ ...header, kind: z.literal("speech"), body: speechBodySchema }),
  z.object({ ...header, kind: z.literal("event"), body: eventBodySchema }),
  z.object({ ...header, kind: z.literal("proposal"), body: proposalBodySchema }),
  z.object({ ...header, kind: z.literal("verdict"), body: verdictBodySchema }),
]);

/** Thrown only by the sending side (encode, make): a bad outgoing envelope is our bug. */
export class EnvelopeError extends BusError {}

export type DecodeResult = { ok: true; envelope: Envelope } | { ok: false; reason: string };

export interface CodecOptions {
  /** Largest encoded size accepted, in bytes (default 1 MiB). */
  maxBytes?: number;
}

// Records and structured cloning are msgpackr extensions other languages cannot read.
// Undefined inside free-form fields becomes nil rather than msgpackr's undefined extension.
const packr = new Packr({ useRecords: false, variableMapSize: true, moreTypes: false, structuredClone: false, encodeUndefinedAsNil: true });

export interface MakeEnvelopeOptions {
  causation?: string;
  trace?: string;
  /** A stable id (e.g. turn id + sequence) instead of a fresh ULID, so a re-send is recognisable. */
  id?: string;
  /** Defaults to now; tests pin it. */
  ts?: number;
}

export function makeEnvelope<K extends EnvelopeKind>(kind: K, from: string, to: string, body: BodyByKind[K], opts: MakeEnvelopeOptions = {}): Envelope<K> {
  const env: Record<string, unknown> = { v: ENVELOPE_VERSION, id: opts.id ?? nextUlid(), kind, from, to, ts: opts.ts ?? Date.now(), body };
  if (opts.causation !== undefined) env.causation = opts.causation;
  if (opts.trace !== undefined) env.trace = opts.trace;
  const parsed = envelopeSchema.safeParse(env);
  if (!parsed.success) throw new EnvelopeError(`invalid ${kind} envelope: ${formatIssues(parsed.error)}`);
  made.add(parsed.data);
  return parsed.data as Envelope<K>;
}

/**
 * Envelopes makeEnvelope checked and returned, so encoding them does not run the schema a
 * second time on every message sent. Receivers validate everything anyway.
 */
const made = new WeakSet<object>();

export function encodeEnvelope(env: Envelope, opts: CodecOptions = {}): Uint8Array {
  let checked: Envelope = env;
  if (!made.has(env)) {
    const parsed = envelopeSchema.safeParse(env);
    if (!parsed.success) throw new EnvelopeError(`invalid envelope: ${formatIssues(parsed.error)}`);
    checked = parsed.data as Envelope;
  }
  const problem = wireProblem(checked, 0, "envelope");
  if (problem) throw new EnvelopeError(`envelope cannot be encoded portably: ${problem}`);
  const wire = withoutUndefined(checked);
  // msgpackr writes integers above 32 bits as float64; a uint64 is what other languages expect for a timestamp.
  wire.ts = BigInt(checked.ts);
  const bytes = packr.pack(wire);
  const limit = opts.maxBytes ?? DEFAULT_MAX_ENVELOPE_BYTES;
  if (bytes.length > limit) throw new PayloadTooLargeError(bytes.length, limit);
  return bytes;
}

export function decodeEnvelope(bytes: Uint8Array, opts: CodecOptions = {}): DecodeResult {
  if (!(bytes instanceof Uint8Array)) return { ok: false, reason: "payload is not bytes" };
  const limit = opts.maxBytes ?? DEFAULT_MAX_ENVELOPE_BYTES;
  if (bytes.length > limit) return { ok: false, reason: `oversized: ${bytes.length} bytes exceeds the limit of ${limit} bytes` };
  // §4 on the bytes first: once msgpackr has decoded them, an extension or a non-string key can no longer be seen.
  const decoded = decodePlainMsgpack(bytes, "envelope");
  if (!decoded.ok) return decoded;
  const raw = decoded.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, reason: "envelope must be a msgpack map" };
  const v = (raw as Record<string, unknown>).v;
  if (v !== ENVELOPE_VERSION) return { ok: false, reason: `unsupported envelope version ${JSON.stringify(v) ?? "undefined"} (this reader speaks ${ENVELOPE_VERSION})` };
  const kind = (raw as Record<string, unknown>).kind;
  if (typeof kind !== "string" || !(ENVELOPE_KINDS as readonly string[]).includes(kind)) {
    return { ok: false, reason: `unknown kind ${typeof kind === "string" ? JSON.stringify(kind.slice(0, 64)) : typeof kind}` };
  }
  const parsed = envelopeSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: `invalid ${kind} envelope: ${formatIssues(parsed.error)}` };
  return { ok: true, envelope: parsed.data as Envelope };
}

/** Whether a decoded envelope is of one kind, narrowing its body type. */
export function isKind<K extends EnvelopeKind>(env: Envelope, kind: K): env is Extract<Envelope, { kind: K }> {
  return env.kind === kind;
}

/**
 * Only what every msgpack library reads the same way: nil, booleans, numbers, strings,
 * binary, arrays and string-keyed maps. Anything else (Dates, Maps, class instances,
 * extension types, BigInts) is named in the returned problem. The sending side's check, on
 * values; receivers check the bytes (plainMsgpack.ts).
 */
export function portableValueProblem(value: unknown, path: string): string | null {
  return wireProblem(value, 0, path);
}

function wireProblem(value: unknown, depth: number, path: string): string | null {
  if (depth > MAX_DEPTH) return `${path} is nested deeper than ${MAX_DEPTH} levels`;
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : `${path} is not a finite number`;
    case "object":
      break;
    default:
      return `${path} is a ${typeof value}`;
  }
  if (value instanceof Uint8Array) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = wireProblem(value[i], depth + 1, `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return `${path} is a ${proto?.constructor?.name ?? "non-plain object"}, not a map`;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const p = wireProblem(v, depth + 1, `${path}.${k.slice(0, 32)}`);
    if (p) return p;
  }
  return null;
}

/** Drops undefined-valued keys so optional fields are absent on the wire, not nil. */
function withoutUndefined(value: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[k] = v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array) ? withoutUndefined(v) : v;
  }
  return out;
}

/** zod's account of a body, field by field (`body.final: Invalid input: ...`); under `root` when given (`reply.ok: ...`). */
export function formatIssues(error: z.ZodError, root?: string): string {
  return error.issues
    .slice(0, 5)
    .map((i) => {
      const path = root === undefined ? i.path : [root, ...i.path];
      return `${path.length ? path.join(".") : "(root)"}: ${i.message}`;
    })
    .join("; ");
}
