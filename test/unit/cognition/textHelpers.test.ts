import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indentNicely, stripEntityAndVerb, stripEntityAndVerbFromStream } from "../../../runtime/cognition/index.ts";

describe("indentNicely", () => {
  it("removes the common indentation and the blank first and last lines", () => {
    const text = indentNicely`
      Model the mind of Samantha.

        * nested point
      ## Rules
    `;
    expect(text).toBe("Model the mind of Samantha.\n\n  * nested point\n## Rules");
  });

  it("aligns multi-line values with their placeholder", () => {
    const list = ["* one", "* two", "* three"].join("\n");
    const text = indentNicely`
      Options:
        ${list}
      Done: ${"a\nb"}
    `;
    expect(text).toBe("Options:\n  * one\n  * two\n  * three\nDone: a\nb");
  });

  it("measures the template, not the values", () => {
    const value = "    deeply indented value";
    expect(indentNicely`
      start
      ${value}
    `).toBe("start\n    deeply indented value");
  });

  it("handles one-liners, empty values and blank lines with spaces", () => {
    expect(indentNicely`plain ${1} text`).toBe("plain 1 text");
    expect(indentNicely`
      a ${undefined}${null}
      \t
      b
    `).toBe("a \n\nb");
    expect(indentNicely``).toBe("");
  });
});

describe("stripEntityAndVerb", () => {
  it("strips `Name verb:` (with extra words), and the surrounding quotes", () => {
    expect(stripEntityAndVerb("Samantha", "said", 'Samantha said: "Hello!"')).toBe("Hello!");
    expect(stripEntityAndVerb("Samantha", "said", 'samantha said with a sinister smile: "I\'m going to eat you!"')).toBe(
      "I'm going to eat you!",
    );
    expect(stripEntityAndVerb("Samantha", "said", "  “Curly quotes”  ")).toBe("Curly quotes");
    expect(stripEntityAndVerb("Samantha", "said", "No prefix: here")).toBe("No prefix: here");
    expect(stripEntityAndVerb("Samantha", "said", 'She said "hi"')).toBe('She said "hi');
    expect(stripEntityAndVerb("Samantha", "said", "Samantha\nsaid: x")).toBe("Samantha\nsaid: x");
    expect(stripEntityAndVerb("Sam (the soul)", "said", 'Sam (the soul) said: "x"')).toBe("x");
  });

  it("the stream version yields exactly the same text, however the answer is chunked", async () => {
    const names = ["Samantha", "Sam", "Ω Soul"];
    const piece = fc.oneof(
      fc.constantFrom("Samantha", "Sam", "Ω Soul", " said", ":", '"', "“", "”", " ", "\n", "hello", "samantha", "'"),
      fc.string({ maxLength: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 6 }), async (name, parts, cuts) => {
        const raw = parts.join("");
        const points = [...new Set(cuts.map((c) => (raw.length ? c % (raw.length + 1) : 0)))].sort((a, b) => a - b);
        const chunks: string[] = [];
        let at = 0;
        for (const p of [...points, raw.length]) {
          chunks.push(raw.slice(at, p));
          at = p;
        }
        const out: string[] = [];
        for await (const c of stripEntityAndVerbFromStream({ soulName: name }, (async function* () {
          yield* chunks;
        })())) {
          out.push(c);
        }
        expect(out.join("")).toBe(stripEntityAndVerb(name, "said", raw));
      }),
      { numRuns: 500 },
    );
  });

  it("streams as it goes once the prefix is decided", async () => {
    const chunks = ["Samantha said: ", '"Hello', " there", " friend", '"'];
    const seen: string[] = [];
    for await (const c of stripEntityAndVerbFromStream({ soulName: "Samantha" }, (async function* () {
      yield* chunks;
    })())) {
      seen.push(c);
    }
    expect(seen).toEqual(["Hello", " there", " friend"]);
  });
});
