/**
 * PROTOCOL.md §4 on receipt: one MessagePack map of plain values with string keys, no
 * extension types, valid UTF-8. The bytes here are written by hand (test/support/wire), the
 * way another language's client, or a hostile one, could send them.
 */
import fc from "fast-check";
import { Packr, unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import { decodeEnvelope, encodeEnvelope, makeEnvelope } from "../../../runtime/bus/index.ts";
import { plainMsgpackProblem } from "../../../runtime/bus/plainMsgpack.ts";
import { bool, concat, hex, int, map, mapOf, nil, perceptionBytes, perceptionFields, str } from "../../support/wire/msgpackBytes.ts";

function reasonOf(bytes: Uint8Array): string {
  const r = decodeEnvelope(bytes);
  if (r.ok) throw new Error(`accepted: ${JSON.stringify(r.envelope)}`);
  return r.reason;
}

const withMeta = (meta: Uint8Array) => perceptionBytes("echo", undefined, { meta });

describe("a valid envelope still decodes", () => {
  it("hand-written: str8 and str16 keys and values, int64 and float64 ts, bin, nil, arrays and nested maps in meta", () => {
    const meta = mapOf([
      [str("k".repeat(40)), str("v".repeat(300))],
      [str("bin"), hex("c4 03 010203")],
      [str("none"), nil],
      [str("list"), hex("93 01 a178 c3")],
      [str("deep"), map({ inner: map({ x: int(5) }) })],
      [str("ünïcode"), str("日本語 ✓")],
      [str("neg"), hex("e0")],
      [str("f32"), hex("ca 3fc00000")],
    ]);
    const r = decodeEnvelope(withMeta(meta));
    if (!r.ok) throw new Error(r.reason);
    expect(r.envelope.ts).toBe(1_700_000_000_000);
    expect((r.envelope.body as { meta: Record<string, unknown> }).meta).toMatchObject({ none: null, list: [1, "x", true], deep: { inner: { x: 5 } }, "ünïcode": "日本語 ✓", neg: -32, f32: 1.5 });
    const asFloat = map({ ...perceptionFields("echo"), ts: hex("cb 4278bcfe56800000") });
    expect(decodeEnvelope(asFloat)).toMatchObject({ ok: true, envelope: { ts: 1_700_000_000_000 } });
  });

  it("any plain value a standard encoder writes passes the byte check, and reads back the same", () => {
    const packr = new Packr({ useRecords: false, variableMapSize: true });
    fc.assert(
      // Through JSON text once: MessagePack has no negative zero in its integer formats, so
      // -0 (which fast-check does produce) reads back as 0, as it would from JSON.
      // msgpackr reads a `__proto__` key back as `__proto_` on purpose (no prototype pollution
      // from the wire), so values with one are left out.
      fc.property(fc.jsonValue({ maxDepth: 8 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown).filter((v) => !JSON.stringify(v).includes('"__proto__"')), (value) => {
        const bytes = packr.pack(value);
        expect(plainMsgpackProblem(bytes)).toBeNull();
        expect(unpack(bytes)).toEqual(value);
      }),
      { numRuns: 500 },
    );
  });

  it("what our own encoder writes", () => {
    const env = makeEnvelope("event", "a", "b", { type: "t", data: { list: [1, 2.5, "x", null, { y: false }], bytes: new Uint8Array([1, 2]) } });
    expect(decodeEnvelope(encodeEnvelope(env)).ok).toBe(true);
  });
});

describe("PROTOCOL.md §4 is enforced on receipt", () => {
  it("refuses msgpackr records (extension 0x72)", () => {
    const bytes = new Packr({ useRecords: true }).pack({ v: 1, id: "01J9ZK3V8Q6W4R2T0Y5X7N1M3P", kind: "perception", from: "a", to: "echo", ts: 1, body: { action: "said", content: "x", name: "n" } });
    expect([bytes[0], bytes[1]]).toEqual([0xd4, 0x72]); // fixext1, type 0x72: a record definition
    expect(reasonOf(bytes)).toMatch(/^not plain msgpack \(PROTOCOL\.md §4\): envelope holds extension type 114 \(a msgpackr record\)/);
  });

  it("refuses msgpackr's undefined (extension 0) in an optional field", () => {
    const bytes = map({ ...perceptionFields("echo"), causation: hex("d4 00 00") });
    expect(reasonOf(bytes)).toMatch(/envelope\.causation holds extension type 0 \(msgpackr's undefined\)/);
  });

  it("refuses a non-string key at the top level", () => {
    const fields = Object.entries(perceptionFields("echo")).map(([k, v]): [Uint8Array, Uint8Array] => [str(k), v]);
    expect(reasonOf(mapOf([...fields, [int(1), str("x")]]))).toMatch(/^not plain msgpack \(PROTOCOL\.md §4\): a key of envelope is an integer, not a string/);
  });

  it("refuses a boolean key in body.meta", () => {
    expect(reasonOf(withMeta(mapOf([[bool(true), str("x")]])))).toMatch(/a key of envelope\.body\.meta is a boolean, not a string/);
  });

  it("refuses nil, array, map and binary keys", () => {
    for (const key of [nil, hex("90"), hex("80"), hex("c4 01 61")]) expect(reasonOf(withMeta(mapOf([[key, int(1)]])))).toMatch(/a key of envelope\.body\.meta is (an? )?\w+, not a string/);
  });

  it("says the timestamp extension is an extension, not a Date", () => {
    const atRoot = reasonOf(hex("d6ff00000000"));
    expect(atRoot).toMatch(/envelope holds extension type -1 \(the timestamp extension\)/);
    expect(atRoot).not.toMatch(/Date/);
    expect(reasonOf(withMeta(map({ at: hex("d6ff65536f80") })))).toMatch(/envelope\.body\.meta\.at holds extension type -1 \(the timestamp extension\)/);
    expect(reasonOf(withMeta(map({ at: hex("c7 0c ff 000000000000000065536f80") })))).toMatch(/extension type -1/); // ext8 form
  });

  it("says a 0xc1 byte is never used, not that bytes trail the value", () => {
    const reason = reasonOf(withMeta(map({ x: hex("c1") })));
    expect(reason).toMatch(/^not msgpack: byte 0xc1 \(never used in MessagePack\) at offset \d+/);
    expect(reason).not.toMatch(/trailing/);
    expect(reasonOf(hex("c1"))).toMatch(/0xc1/);
  });

  it("refuses strings that are not UTF-8, in values and in keys", () => {
    expect(reasonOf(withMeta(map({ x: str(hex("ff fe")) })))).toMatch(/envelope\.body\.meta\.x is not valid UTF-8/);
    expect(reasonOf(withMeta(map({ x: str(concat(new Uint8Array(40).fill(0x61), hex("ed a0 80"))) })))).toMatch(/not valid UTF-8/); // a surrogate, CESU-8 style
    expect(reasonOf(withMeta(mapOf([[str(hex("c3")), int(1)]])))).toMatch(/a key of envelope\.body\.meta is not valid UTF-8/);
  });

  it("refuses NaN and infinities", () => {
    expect(reasonOf(withMeta(map({ x: hex("cb 7ff8000000000000") })))).toMatch(/envelope\.body\.meta\.x is not a finite number/);
    expect(reasonOf(withMeta(map({ x: hex("ca 7f800000") })))).toMatch(/not a finite number/);
  });

  it("still names trailing bytes, truncation and excessive depth", () => {
    const good = perceptionBytes("echo");
    expect(reasonOf(concat(good, hex("00")))).toMatch(/^not msgpack: trailing bytes after the first value/);
    expect(reasonOf(good.subarray(0, good.length - 1))).toBe("not msgpack: Unexpected end of MessagePack data");
    let nested = str("x");
    for (let i = 0; i < 40; i++) nested = map({ n: nested });
    expect(reasonOf(withMeta(nested))).toMatch(/envelope\.body\.meta(\.n)+ is nested deeper than 32 levels/);
  });
});
