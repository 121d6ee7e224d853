/**
 * Fuzzed bad input for a node's perception intake (chaos scenario 5, test/chaos/badInput.test.ts):
 * random bytes, broken msgpack, non-plain msgpack, wrong versions and kinds, schema breaks,
 * misaddressed perceptions, node-only fields on `perceive`, routes to unknown processes, and
 * oversized envelopes. Generated with fast-check from a fixed seed, so a run is repeatable.
 *
 * Every case is checked here, before it is sent, to be invalid for the reason its category
 * claims: a case that decodes gets its reason from `decodeEnvelope` (the codec every receiver
 * uses), so the node's dead letter must carry exactly that text; one that decodes must break
 * one of the intake's own rules (runtime/node/perceptionIntake.ts), and its category's pattern
 * says which. A generator that makes a valid envelope fails the run instead of hiding in it.
 *
 * Dead letters keep only the payload's size and first 256 bytes (runtime/bus/dead.ts), so a
 * case is identified by subject + size + head; every case carries a unique id early in its
 * bytes where it can, and cases whose key would repeat are dropped and replaced.
 */
import fc from "fast-check";
import { Packr } from "msgpackr";
import { clusterSubjects, DEAD_LETTER_HEAD_BYTES, decodeEnvelope, encodeEnvelope, makeEnvelope, type DeadLetter } from "../../../runtime/bus/index.ts";

export interface FuzzCase {
  category: string;
  subject: string;
  bytes: Uint8Array;
  /** The exact reason (a codec failure) or the pattern (an intake rule) its dead letter must carry. */
  expect: string | RegExp;
}

export interface FuzzOptions {
  cluster: string;
  /** Souls the node hosts (each with the given processes). */
  souls: readonly string[];
  processes: { has(process: string): boolean };
  count: number;
  seed: number;
  /** Every n-th case is an oversized perception (1 MiB + a little; the server must allow it). */
  oversizedEvery: number;
}

const plain = new Packr({ useRecords: false, variableMapSize: true });
/** msgpackr's defaults: Dates as the timestamp extension, objects as records (extension 114). */
const withExtensions = new Packr({ useRecords: true });
const MAX_ENVELOPE = 1024 * 1024;

/** The dead-letter key of a payload on a subject. */
export function caseKey(subject: string, bytes: Uint8Array): string {
  return `${subject}|${bytes.length}|${Buffer.from(bytes.subarray(0, DEAD_LETTER_HEAD_BYTES)).toString("base64")}`;
}

export function deadLetterKey(letter: DeadLetter): string {
  return `${letter.subject}|${letter.size}|${letter.head}`;
}

const BAD_IDENTIFIERS: unknown[] = [null, "", 42, true, [], {}, "a\u0001b", "x".repeat(300)];
const BAD_HEADER = fc.record({ field: fc.constantFrom("id", "from", "to", "causation", "trace"), value: fc.constantFrom(...BAD_IDENTIFIERS) });
const BAD_TS = fc.record({ field: fc.constant("ts"), value: fc.constantFrom<unknown>(-1, 1.5, "now", null, true) });
const BAD_BODY_FIELD = fc.oneof(
  fc.record({ field: fc.constant("action"), value: fc.constantFrom<unknown>(null, "", 42, "a".repeat(200), "sa\u0007id") }),
  fc.record({ field: fc.constant("content"), value: fc.constantFrom<unknown>(null, 42, true, []) }),
  fc.record({ field: fc.constant("name"), value: fc.constantFrom<unknown>(null, 42, "n".repeat(300)) }),
  fc.record({ field: fc.constantFrom("params", "meta"), value: fc.constantFrom<unknown>(42, "x", true) }),
);
const name = fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/);

/** One recipe per kind of fault; `build` turns a recipe into bytes, with the case's unique id. */
const recipe = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("random bytes" as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 300 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("truncated msgpack" as const), cut: fc.double({ min: 0.05, max: 0.98, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("trailing bytes" as const), extra: fc.uint8Array({ minLength: 1, maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("not a map" as const), value: fc.oneof(fc.string(), fc.integer(), fc.array(fc.integer(), { maxLength: 4 }), fc.constant(null)) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("wrong version" as const), v: fc.constantFrom<unknown>(0, 2, 99, -1, "1", 1.5, null, true) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("unknown kind" as const), kind: fc.oneof(name.filter((k) => !KINDS.has(k)), fc.constant(7)) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("wrong kind" as const), kind: fc.constantFrom("whisper", "speech", "event", "proposal", "verdict") }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("schema" as const), header: fc.option(fc.oneof(BAD_HEADER, BAD_TS), { nil: undefined }), body: BAD_BODY_FIELD }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("not plain msgpack" as const), how: fc.constantFrom("timestamp ext", "record ext", "NaN", "integer key", "bad utf-8", "too deep") }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("wrong to" as const), to: name }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("node-only field" as const), internal: fc.option(fc.boolean(), { nil: undefined }), process: fc.option(name, { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("unknown process" as const), process: name }) },
);
type Recipe = typeof recipe extends fc.Arbitrary<infer R> ? R : never;
const KINDS = new Set(["perception", "whisper", "speech", "event", "proposal", "verdict"]);

const perception = (id: string, to: string, body: Record<string, unknown> = {}) => ({ v: 1, id, kind: "perception", from: "fuzz", to, ts: Date.now(), body: { action: "said", content: "hi", name: "fz", ...body } });

function notPlain(how: string, id: string, soul: string): Uint8Array {
  switch (how) {
    case "timestamp ext":
      return plain.pack(perception(id, soul, { meta: { at: new Date(0) } }));
    case "record ext":
      return withExtensions.pack(perception(id, soul));
    case "NaN":
      return plain.pack(perception(id, soul, { meta: { x: Number.NaN } }));
    case "integer key":
      return plain.pack(perception(id, soul, { meta: new Map([[1, "one"]]) }));
    case "bad utf-8": {
      const bytes = Buffer.from(plain.pack(perception(id, soul, { content: "ZZZZ" })));
      bytes.fill(0xff, bytes.indexOf("ZZZZ"), bytes.indexOf("ZZZZ") + 4);
      return bytes;
    }
    default: {
      let deep: Record<string, unknown> = { end: true };
      for (let i = 0; i < 40; i++) deep = { d: deep };
      return plain.pack(perception(id, soul, { meta: deep }));
    }
  }
}

/** The bytes and the subject of a recipe, and the intake rule it breaks when it decodes (null: the codec refuses it). */
function build(r: Recipe, id: string, soul: string, s: ReturnType<typeof clusterSubjects>): { subject: string; bytes: Uint8Array; rule: RegExp | null } {
  const valid = () => encodeEnvelope(makeEnvelope("perception", "fuzz", soul, { action: "said", content: `valid ${id}`, name: "fz" }, { id }));
  const on = (bytes: Uint8Array, rule: RegExp | null = null, subject = s.perceive(soul)) => ({ subject, bytes, rule });
  switch (r.t) {
    case "random bytes":
      return on(r.bytes);
    case "truncated msgpack": {
      const bytes = valid();
      return on(bytes.subarray(0, Math.max(1, Math.floor(bytes.length * r.cut))));
    }
    case "trailing bytes":
      return on(Buffer.concat([valid(), r.extra]));
    case "not a map":
      return on(plain.pack(r.value));
    case "wrong version":
      return on(plain.pack({ ...perception(id, soul), v: r.v }));
    case "unknown kind":
      return on(plain.pack({ ...perception(id, soul), kind: r.kind }));
    case "wrong kind": {
      const bodies = { whisper: { content: "psst", source: "fz" }, speech: { proposalId: "p", text: "t", final: true }, event: { type: "x" }, proposal: { kind: "speak" }, verdict: { verdict: "pass" } };
      const env = makeEnvelope(r.kind, "fuzz", soul, bodies[r.kind] as never, { id });
      return on(encodeEnvelope(env), new RegExp(`^unexpected kind ${r.kind} \\(this receiver takes perception\\)$`));
    }
    case "schema": {
      const env: Record<string, unknown> = perception(id, soul, { [r.body.field]: r.body.value });
      if (r.header) env[r.header.field] = r.header.value;
      return on(plain.pack(env));
    }
    case "not plain msgpack":
      return on(notPlain(r.how, id, soul));
    case "wrong to": {
      const to = r.to === soul ? `${soul}-not` : r.to;
      return on(plain.pack(perception(id, to)), new RegExp(`^envelope is addressed to '${to}' but arrived on the perceive subject of '${soul}'$`));
    }
    case "node-only field": {
      // At least one of the two: a perception carrying neither would be valid.
      const fields = r.internal === undefined && r.process === undefined ? { internal: true } : { ...(r.internal !== undefined ? { internal: r.internal } : {}), ...(r.process !== undefined ? { process: r.process } : {}) };
      return on(plain.pack(perception(id, soul, fields)), /^perception on the perceive subject carries '(internal|process)'/);
    }
    case "unknown process":
      // Only the node-only `internal` subject may route at all; there, an unknown process is the fault.
      return on(plain.pack(perception(id, soul, { internal: true, process: `${r.process}-nope` })), new RegExp(`^perception routed to unknown process '${r.process}-nope' of soul '${soul}'$`), s.internal(soul));
  }
}

function oversized(id: string, soul: string, s: ReturnType<typeof clusterSubjects>): FuzzCase {
  const bytes = plain.pack(perception(id, soul, { content: "o".repeat(MAX_ENVELOPE + 1024) }));
  return { category: "oversized", subject: s.perceive(soul), bytes, expect: `oversized: ${bytes.length} bytes exceeds the limit of ${MAX_ENVELOPE} bytes` };
}

/** `count` distinct invalid cases (plus one empty payload per soul), each with the reason to expect. */
export function fuzzCases(o: FuzzOptions): FuzzCase[] {
  const s = clusterSubjects(o.cluster);
  const out: FuzzCase[] = o.souls.map((soul) => ({ category: "empty payload", subject: s.perceive(soul), bytes: new Uint8Array(), expect: "empty payload" }));
  const seen = new Set(out.map((c) => caseKey(c.subject, c.bytes)));
  const recipes = fc.sample(fc.tuple(recipe, fc.constantFrom(...o.souls)), { numRuns: o.count * 2, seed: o.seed });
  for (let i = 0; out.length < o.count + o.souls.length; i++) {
    if (i >= recipes.length) throw new Error(`only ${out.length} distinct fuzz cases from ${recipes.length} recipes`);
    const [r, soul] = recipes[i];
    const id = `fz-${o.seed}-${i}`;
    const c = i % o.oversizedEvery === o.oversizedEvery - 1 ? oversized(id, soul, s) : checked(r.t, build(r, id, soul, s), o.processes);
    const key = caseKey(c.subject, c.bytes);
    if (seen.has(key)) continue; // a dead letter could not tell the two apart
    seen.add(key);
    out.push(c);
  }
  return out;
}

/** What the codec must say about each category that it refuses (random bytes: anything). */
const CODEC_REASONS: Record<string, RegExp> = {
  "random bytes": /./,
  "truncated msgpack": /^not msgpack: /,
  "trailing bytes": /^not msgpack: /,
  "not a map": /^envelope must be a msgpack map$/,
  "wrong version": /^unsupported envelope version /,
  "unknown kind": /^unknown kind /,
  schema: /^invalid perception envelope: /,
  "not plain msgpack": /^not (plain )?msgpack/,
};

/** The case, with the reason it must be dead-lettered for; throws when it is not invalid in the way its category says. */
function checked(category: string, built: { subject: string; bytes: Uint8Array; rule: RegExp | null }, processes: { has(process: string): boolean }): FuzzCase {
  const decoded = decodeEnvelope(built.bytes);
  const base = { category, subject: built.subject, bytes: built.bytes };
  if (!decoded.ok) {
    if (built.rule || !CODEC_REASONS[category]?.test(decoded.reason)) throw new Error(`fuzz case '${category}' is refused by the codec for another reason: ${decoded.reason}`);
    return { ...base, expect: decoded.reason };
  }
  const env = decoded.envelope as { kind: string; to: string; body: { internal?: unknown; process?: string } };
  const soul = built.subject.split(".").at(-2);
  const onPerceive = built.subject.endsWith(".perceive");
  const breaks =
    env.kind !== "perception" ||
    env.to !== soul ||
    (onPerceive && (env.body.internal !== undefined || env.body.process !== undefined)) ||
    (env.body.process !== undefined && !processes.has(env.body.process));
  if (!built.rule || !breaks) throw new Error(`fuzz case '${category}' is a valid perception for ${built.subject}: the generator is wrong`);
  return { ...base, expect: built.rule };
}
