/** Long speech split at a platform's limit: every piece fits, no fence is left open, nothing is lost. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openFence, splitText } from "../../../bridges/core/index.ts";

describe("splitText", () => {
  it("keeps short text whole and drops empty text", () => {
    expect(splitText("Hello.", 2000)).toEqual(["Hello."]);
    expect(splitText("  \n ", 2000)).toEqual([]);
  });

  it("prefers a paragraph break, then a line, then a sentence end", () => {
    const text = `${"a".repeat(60)}\n\n${"b".repeat(30)}. ${"c".repeat(30)}`;
    expect(splitText(text, 100)).toEqual(["a".repeat(60), `${"b".repeat(30)}. ${"c".repeat(30)}`]);
  });

  it("closes a code fence at the cut and reopens it, with its language, in the next piece", () => {
    const code = Array.from({ length: 30 }, (_, i) => `const x${i} = ${i};`).join("\n");
    const pieces = splitText(`Here:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`, 200);
    expect(pieces.length).toBeGreaterThan(2);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(200);
      expect(openFence(p), p).toBeUndefined();
    }
    expect(pieces[1]?.startsWith("```ts\n")).toBe(true);
  });

  it("for any text: pieces fit the limit, only the input's own unclosed fence stays open, and no character is lost", () => {
    const line = fc.oneof(fc.constantFrom("```", "```js", "~~~", "", "."), fc.string({ maxLength: 120 }), fc.lorem({ maxCount: 30 }));
    // What survives a split: every non-space character outside the fence markers, in order.
    const content = (s: string) => s.replace(/^ {0,3}(`{3,}|~{3,}).*$/gm, "").replace(/\s+/g, "");
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.integer({ min: 64, max: 400 }), (lines, limit) => {
        const text = lines.join("\n");
        const pieces = splitText(text, limit);
        pieces.forEach((p, i) => {
          expect(p.length).toBeLessThanOrEqual(limit);
          if (i < pieces.length - 1) expect(openFence(p)).toBeUndefined();
        });
        if (pieces.length > 0 && openFence(text) === undefined) expect(openFence(pieces[pieces.length - 1] as string)).toBeUndefined();
        expect(content(pieces.join("\n"))).toBe(content(text));
      }),
      { numRuns: 300 },
    );
  });
});
