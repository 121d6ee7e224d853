/**
 * The JSON encoding of the values a soul file carries (runtime/store/soulFileValues.ts):
 * each value msgpackr keeps that JSON cannot is tagged and read back as it was.
 */
import { describe, expect, it } from "vitest";
import { fromJsonValue, toJsonValue } from "../../../runtime/store/soulFileValues.ts";

/** Through JSON text, as a soul file goes. */
const roundTrip = (value: unknown): unknown => fromJsonValue(JSON.parse(JSON.stringify(toJsonValue(value))));

describe("soul file values", () => {
  it("gives back every value the store keeps, including those JSON cannot hold", () => {
    const value = {
      text: "é ✓ \u0000",
      n: 1.5,
      negZero: -0,
      nan: Number.NaN,
      inf: Number.NEGATIVE_INFINITY,
      big: -(2n ** 63n),
      when: new Date("2020-02-29T23:59:59.999Z"),
      bytes: new Uint8Array([0, 255, 128]),
      map: new Map<unknown, unknown>([[{ k: 1 }, new Date(0)], ["x", undefined]]),
      list: [undefined, null, [1, [2]]],
      nested: { a: { b: { c: undefined } } },
    };
    const back = roundTrip(value) as typeof value;
    expect(back).toEqual(value);
    expect(Object.is(back.negZero, -0)).toBe(true);
    expect(Object.hasOwn(back.nested.a.b, "c")).toBe(true);
  });

  it("keeps an invalid date invalid, a hole as undefined, and a field named __proto__ as a field", () => {
    const invalid = roundTrip(new Date(Number.NaN)) as Date;
    expect(invalid).toBeInstanceOf(Date);
    expect(Number.isNaN(invalid.getTime())).toBe(true);
    expect(roundTrip([1, , 3])).toEqual([1, undefined, 3]);
    const proto = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    const back = roundTrip(proto) as Record<string, unknown>;
    expect(Object.hasOwn(back, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("wraps an object with an $ensoul field of its own, so it is never read as a tag", () => {
    const value = { $ensoul: "date", value: "not a date at all" };
    expect(toJsonValue(value)).toEqual({ $ensoul: "object", value });
    expect(roundTrip(value)).toEqual(value);
  });

  it("refuses what the store cannot keep, naming where it is", () => {
    expect(() => toJsonValue({ a: [1, () => 2] }, "soul")).toThrow(/cannot write soul\.a\[1\] to a soul file: a function/);
    expect(() => toJsonValue({ s: Symbol("x") }, "soul")).toThrow(/soul\.s.*a symbol/);
    expect(() => toJsonValue({ w: new WeakMap() }, "soul")).toThrow(/soul\.w.*a WeakMap object/);
  });

  it("refuses a malformed tag, naming where it is", () => {
    expect(() => fromJsonValue({ a: { $ensoul: "bigint", value: "1.5" } }, "doc")).toThrow(/doc\.a: bigint "1\.5" is not a whole number/);
    expect(() => fromJsonValue({ $ensoul: "date", value: "yesterday" }, "doc")).toThrow(/doc: date "yesterday" is not an ISO 8601 time/);
    expect(() => fromJsonValue({ $ensoul: "number", value: "1e999" }, "doc")).toThrow(/unknown number "1e999"/);
    expect(() => fromJsonValue({ $ensoul: "map", entries: [[1]] }, "doc")).toThrow(/a map's entries must be \[key, value\] pairs/);
    expect(() => fromJsonValue({ $ensoul: "bytes" }, "doc")).toThrow(/the "bytes" value has no "base64" field/);
  });
});
