import { readFileSync } from "node:fs";
import fc from "fast-check";
import { Packr, unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import {
  decodeEnvelope,
  DEFAULT_MAX_ENVELOPE_BYTES,
  encodeEnvelope,
  ENVELOPE_KINDS,
  EnvelopeError,
  isKind,
  makeEnvelope,
  PayloadTooLargeError,
  type BodyByKind,
  type EnvelopeKind,
} from "../../../runtime/bus/index.ts";

/** The worked example in docs/PROTOCOL.md; the test below keeps the two in step. */
const EXAMPLE_HEX =
  "87a17601a26964ba30314a395a4b3356385136573452325430593558374e314d3350a466726f6daf6272696467652d7465726d696e616ca2746fa873616d616e746861a27473d30000018bcfe56800a46b696e64aa70657263657074696f6ea4626f647983a6616374696f6ea473616964a7636f6e74656e74a26869a46e616d65a3616461";

const bodies: BodyByKind = {
  perception: { action: "said", content: "hello", name: "ada", internal: false, process: "greeting", params: { n: 1 }, meta: { channel: "C1", thread: null } },
  whisper: { content: "she seems tired", source: "daimon-1" },
  speech: { proposalId: "soul:3:0", text: "Hi!", final: true, seq: 0, chunk: 2 },
  event: { type: "process.transition", data: { from: "intro", to: "chat" } },
  proposal: { kind: "speak", content: "Hi!", extra: [1, "two", { three: 3 }] },
  verdict: { verdict: "transform", reason: "tone", proposal: { kind: "speak", content: "Hello." } },
};

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fromHex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));
const packAny = new Packr({ useRecords: false, variableMapSize: true });
const validWire = () => ({ v: 1, id: "01J9ZK3V8Q6W4R2T0Y5X7N1M3P", kind: "perception", from: "a", to: "b", ts: 1, body: { action: "said", content: "x", name: "n" } });

function expectRejected(bytes: Uint8Array, reason?: RegExp): string {
  const r = decodeEnvelope(bytes);
  expect(r.ok).toBe(false);
  if (r.ok) throw new Error("unreachable");
  expect(typeof r.reason).toBe("string");
  expect(r.reason.length).toBeGreaterThan(0);
  if (reason) expect(r.reason).toMatch(reason);
  return r.reason;
}

describe("envelope codec", () => {
  it.each(ENVELOPE_KINDS)("round-trips a %s envelope", (kind: EnvelopeKind) => {
    const env = makeEnvelope(kind, "from-actor", "to-actor", bodies[kind], { causation: "01CAUSE", trace: "trace-1" });
    const r = decodeEnvelope(encodeEnvelope(env));
    expect(r).toEqual({ ok: true, envelope: env });
  });

  it("makes sortable unique ULID ids and stamps the time", () => {
    const ids = Array.from({ length: 200 }, () => makeEnvelope("event", "a", "b", { type: "t" }).id);
    expect(new Set(ids).size).toBe(200);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const env = makeEnvelope("event", "a", "b", { type: "t" });
    expect(Math.abs(env.ts - Date.now())).toBeLessThan(1000);
    expect(env.v).toBe(1);
    expect("causation" in env).toBe(false);
  });

  it("keeps a caller's stable id (turn id + sequence)", () => {
    const env = makeEnvelope("speech", "soul", "bridge", bodies.speech, { id: "soul:3:0" });
    expect(env.id).toBe("soul:3:0");
  });

  it("encodes a plain msgpack map any reader can read: the documented worked example", () => {
    const env = makeEnvelope("perception", "bridge-terminal", "samantha", { action: "said", content: "hi", name: "ada" }, { id: "01J9ZK3V8Q6W4R2T0Y5X7N1M3P", ts: 1_700_000_000_000 });
    const bytes = encodeEnvelope(env);
    expect(hex(bytes)).toBe(EXAMPLE_HEX);
    expect(bytes[0] & 0xf0).toBe(0x80); // fixmap
    expect(unpack(bytes)).toEqual({ ...env, ts: BigInt(env.ts) }); // a reader with default options (ts is an int64)
  });

  it("docs/PROTOCOL.md shows the same bytes", () => {
    const doc = readFileSync(new URL("../../../docs/PROTOCOL.md", import.meta.url), "utf8");
    expect(doc).toContain(EXAMPLE_HEX);
    expect(doc).toContain(`these ${EXAMPLE_HEX.length / 2} bytes`);
  });

  it("decodes an envelope written by another msgpack encoder, including a float64 or uint64 ts, and ignores unknown top-level fields", () => {
    const wire = { ...validWire(), ts: 1_700_000_000_000, future: "field" };
    const r = decodeEnvelope(packAny.pack(wire));
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.envelope.ts).toBe(1_700_000_000_000);
      expect("future" in r.envelope).toBe(false);
    }
    // uint64 timestamp: 0xcf then 8 bytes big-endian
    const viaBigInt = decodeEnvelope(packAny.pack({ ...validWire(), ts: 1_700_000_000_000n }));
    expect(viaBigInt.ok && viaBigInt.envelope.ts).toBe(1_700_000_000_000);
  });

  it("narrows by kind", () => {
    const env = makeEnvelope("whisper", "d", "s", bodies.whisper) as ReturnType<typeof makeEnvelope>;
    if (isKind(env, "whisper")) expect(env.body.source).toBe("daimon-1");
    else throw new Error("expected a whisper");
  });

  it("refuses to make or encode invalid envelopes (a bug on the sending side throws)", () => {
    expect(() => makeEnvelope("speech", "a", "b", { text: "x" } as unknown as BodyByKind["speech"])).toThrow(EnvelopeError);
    expect(() => makeEnvelope("perception", "", "b", bodies.perception)).toThrow(/from/);
    const withDate = makeEnvelope("event", "a", "b", { type: "t" });
    (withDate.body as { data?: unknown }).data = { when: new Date() };
    expect(() => encodeEnvelope(withDate)).toThrow(/Date/);
    const huge = makeEnvelope("event", "a", "b", { type: "t", data: "x".repeat(DEFAULT_MAX_ENVELOPE_BYTES) });
    expect(() => encodeEnvelope(huge)).toThrow(PayloadTooLargeError);
    expect(() => encodeEnvelope(makeEnvelope("event", "a", "b", { type: "t", data: "x".repeat(100) }), { maxBytes: 50 })).toThrow(PayloadTooLargeError);
  });
});

describe("envelope decoding of bad input never throws", () => {
  it("rejects random bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        const r = decodeEnvelope(bytes);
        if (r.ok) throw new Error("random bytes decoded as an envelope");
        return typeof r.reason === "string";
      }),
      { numRuns: 2000 },
    );
  });

  it("rejects arbitrary msgpack values", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true }), (value) => {
        let bytes: Uint8Array;
        try {
          bytes = packAny.pack(value);
        } catch {
          return true; // not encodable: nothing to decode
        }
        const r = decodeEnvelope(bytes);
        return r.ok === false && typeof r.reason === "string";
      }),
      { numRuns: 1000 },
    );
  });

  it("rejects every truncation and survives random byte flips of a valid envelope", () => {
    const good = encodeEnvelope(makeEnvelope("speech", "soul", "bridge", bodies.speech));
    for (let n = 0; n < good.length; n++) expectRejected(good.subarray(0, n));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (flips) => {
        const bytes = good.slice();
        for (const [i, b] of flips) bytes[i] = b;
        const r = decodeEnvelope(bytes); // may be valid (a flipped letter in text), must not throw
        return typeof r.ok === "boolean";
      }),
      { numRuns: 2000 },
    );
  });

  it("rejects trailing bytes, extension types and non-map roots", () => {
    const good = encodeEnvelope(makeEnvelope("event", "a", "b", { type: "t" }));
    expectRejected(new Uint8Array([...good, 0x00]), /trailing bytes/);
    expectRejected(fromHex("c1"), /never used/);
    expectRejected(packAny.pack({ ...validWire(), body: { ...validWire().body, meta: { at: new Date() } } }), /envelope\.body\.meta\.at holds extension type -1 \(the timestamp extension\)/);
    expectRejected(fromHex("d6ff00000000"), /plain msgpack|map/); // timestamp extension at the root
    expectRejected(packAny.pack([1, 2, 3]), /map/);
    expectRejected(packAny.pack("perception"), /map/);
    expectRejected(new Uint8Array(), /empty/);
  });

  it("rejects nesting deep enough to blow the stack, and still decodes afterwards", () => {
    expectRejected(new Uint8Array(200_000).fill(0x91), /msgpack/);
    let nested: unknown = "x";
    for (let i = 0; i < 40; i++) nested = { n: nested };
    expectRejected(packAny.pack({ ...validWire(), body: { ...validWire().body, meta: nested } }), /deeper/);
    expect(decodeEnvelope(packAny.pack(validWire())).ok).toBe(true);
  });

  it("names the missing field", () => {
    for (const field of ["id", "from", "to", "ts", "body"] as const) {
      const wire: Record<string, unknown> = validWire();
      delete wire[field];
      expectRejected(packAny.pack(wire), new RegExp(field));
    }
    for (const field of ["action", "content", "name"]) {
      const wire = validWire();
      delete (wire.body as Record<string, unknown>)[field];
      expectRejected(packAny.pack(wire), new RegExp(`body\\.${field}`));
    }
  });

  it("names wrong types", () => {
    expectRejected(packAny.pack({ ...validWire(), id: 5 }), /id/);
    expectRejected(packAny.pack({ ...validWire(), ts: "now" }), /ts/);
    expectRejected(packAny.pack({ ...validWire(), ts: -1 }), /ts/);
    expectRejected(packAny.pack({ ...validWire(), ts: 1.5 }), /ts/);
    expectRejected(packAny.pack({ ...validWire(), causation: 7 }), /causation/);
    expectRejected(packAny.pack({ ...validWire(), kind: "speech", body: { proposalId: "p", text: "t", final: "yes" } }), /body\.final/);
    expectRejected(packAny.pack({ ...validWire(), kind: "verdict", body: { verdict: "maybe" } }), /body\.verdict/);
    expectRejected(packAny.pack({ ...validWire(), body: "hello" }), /body/);
  });

  it("rejects unknown kinds and versions with a reason saying so", () => {
    expectRejected(packAny.pack({ ...validWire(), kind: "telepathy" }), /unknown kind "telepathy"/);
    expectRejected(packAny.pack({ ...validWire(), kind: 3 }), /unknown kind number/);
    expectRejected(packAny.pack({ ...validWire(), v: 2 }), /unsupported envelope version 2/);
    expectRejected(packAny.pack({ ...validWire(), v: "1" }), /version/);
  });

  it("rejects oversized payloads before decoding them, with a configurable limit", () => {
    expectRejected(new Uint8Array(DEFAULT_MAX_ENVELOPE_BYTES + 1), /oversized: 1048577 bytes exceeds the limit of 1048576/);
    const small = encodeEnvelope(makeEnvelope("event", "a", "b", { type: "t", data: "x".repeat(200) }));
    const r = decodeEnvelope(small, { maxBytes: 100 });
    expect(r.ok).toBe(false);
    expect(r.ok ? "" : r.reason).toMatch(/oversized/);
    expect(decodeEnvelope(small, { maxBytes: 1000 }).ok).toBe(true);
  });

  it("keeps hostile content out of the reason", () => {
    const good = packAny.pack({ ...validWire(), body: { ...validWire().body, content: "SECRET-TOKEN" } });
    const reason = expectRejected(new Uint8Array([...good, 0x01]));
    expect(reason).not.toContain("SECRET-TOKEN");
    expect(expectRejected(packAny.pack({ ...validWire(), kind: "x".repeat(10_000) })).length).toBeLessThan(200);
  });
});

describe("identifier fields (PROTOCOL.md §5: no control characters)", () => {
  const controls = ["a\u0000b", "line\nbreak", "tab\there", "bell\u0007", "del\u007f", "c1\u0085"];

  it.each(["id", "from", "to", "causation", "trace"])("rejects a control character in %s on receipt, naming the field", (field) => {
    for (const bad of controls) expectRejected(packAny.pack({ ...validWire(), [field]: bad }), new RegExp(`^invalid perception envelope: ${field}: must not contain control characters`));
  });

  it("rejects them in the body's identifiers too", () => {
    const base = validWire();
    expectRejected(packAny.pack({ ...base, body: { ...base.body, action: "sa\nid" } }), /body\.action: must not contain control characters/);
    expectRejected(packAny.pack({ ...base, body: { ...base.body, process: "p\r" } }), /body\.process: must not contain control characters/);
    expectRejected(packAny.pack({ ...base, kind: "whisper", body: { content: "x", source: "k\u001b[31m" } }), /body\.source/);
    expectRejected(packAny.pack({ ...base, kind: "speech", body: { proposalId: "p\n1", text: "t", final: true } }), /body\.proposalId/);
    expectRejected(packAny.pack({ ...base, kind: "event", body: { type: "t\u0000" } }), /body\.type/);
    expectRejected(packAny.pack({ ...base, kind: "proposal", body: { kind: "speak\n" } }), /body\.kind/);
  });

  it("keeps any other text: non-ASCII, spaces, punctuation; and free text may hold newlines", () => {
    const wire = { ...validWire(), id: "turn 7: ü/日本", from: "bridge slack (eu)", causation: "x~1", body: { action: "said", content: "two\nlines\u0007", name: "Ada\nLovelace" } };
    expect(decodeEnvelope(packAny.pack(wire)).ok).toBe(true);
  });

  it("refuses to make an envelope whose identifiers a receiver would reject", () => {
    expect(() => makeEnvelope("perception", "a\nb", "b", bodies.perception)).toThrow(/from: must not contain control characters/);
  });
});

describe("optional fields are absent, never nil or empty", () => {
  it.each(["causation", "trace"])("rejects %s as nil or as an empty string", (field) => {
    expectRejected(packAny.pack({ ...validWire(), [field]: null }), new RegExp(`${field}: .*null`));
    expectRejected(packAny.pack({ ...validWire(), [field]: "" }), new RegExp(`${field}: `));
  });

  it("rejects optional body fields sent as nil", () => {
    const base = validWire();
    for (const field of ["internal", "process", "params", "meta"]) expectRejected(packAny.pack({ ...base, body: { ...base.body, [field]: null } }), new RegExp(`body\\.${field}: `));
  });
});
