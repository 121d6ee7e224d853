import { describe, expect, it } from "vitest";
import { canonicalJson, extractJson, parseJsonText, stripMarkdownFences } from "../../../runtime/providers/jsonAnswer.ts";

describe("getting JSON out of a model's text", () => {
  it("reads fenced, bare and prose-wrapped answers", () => {
    expect(parseJsonText('```json\n{"a":1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonText('{"a":[1,2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
    expect(parseJsonText('Here is the answer: {"a":1}. Hope that helps.')).toEqual({ ok: true, value: { a: 1 } });
  });

  it("takes the first balanced object, so later braces in prose do not spoil it", () => {
    expect(parseJsonText('Answer: {"a":1} and a smiley {:)}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it("does not count braces inside strings", () => {
    expect(extractJson('x {"note":"a } inside","b":"\\"{"} y')).toBe('{"note":"a } inside","b":"\\"{"}');
  });

  it("says why when there is nothing to parse", () => {
    expect(parseJsonText("no json here")).toEqual({ ok: false, error: "the answer contained no JSON object" });
    const broken = parseJsonText('{"a": }');
    expect(broken.ok).toBe(false);
  });

  it("strips fences and compares values, not spellings", () => {
    expect(stripMarkdownFences("```\nplain\n```")).toBe("plain");
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });
});
