import { describe, expect, it } from "vitest";
import { DialogueStreamExtractor, parsePipelineAnswer, PIPELINE_STEPS } from "../../../runtime/cognition/index.ts";

/** Feeds the answer in pieces of `size` characters; returns what was released, piece by piece, and at the end. */
function feed(answer: string, size: number): { released: string[]; final: string; extractor: DialogueStreamExtractor } {
  const extractor = new DialogueStreamExtractor();
  const released: string[] = [];
  for (let i = 0; i < answer.length; i += size) {
    const out = extractor.push(answer.slice(i, i + size));
    if (out) released.push(out);
  }
  const parsed = parsePipelineAnswer(answer, PIPELINE_STEPS);
  const rest = extractor.finish(parsed.dialogue);
  if (rest) released.push(rest);
  return { released, final: parsed.dialogue, extractor };
}

describe("DialogueStreamExtractor", () => {
  const answer = `<internal_monologue verb="mused">private</internal_monologue>\n<external_dialogue verb="said">Hello Tom, the build is green.</external_dialogue>\n<user_model_check>false</user_model_check>`;

  it.each([1, 2, 3, 5, 8, 13, 1000])("releases exactly the dialogue, in pieces of %i characters", (size) => {
    const { released, final, extractor } = feed(answer, size);
    expect(released.join("")).toBe(final);
    expect(final).toBe("Hello Tom, the build is green.");
    expect(extractor.diverged).toBe(false);
    if (size < 10) expect(released.length).toBeGreaterThan(1);
  });

  it.each([1, 2, 3, 7])("a `>` inside a quoted attribute is not the tag's end, streamed in pieces of %i either", (size) => {
    const quoted = `<internal_monologue verb="mused">private</internal_monologue>\n<external_dialogue verb="said" note="a>b">Hi</external_dialogue>`;
    const { released, final, extractor } = feed(quoted, size);
    expect(final).toBe("Hi");
    expect(released.join("")).toBe("Hi");
    expect(extractor.diverged).toBe(false);
  });

  it("releases nothing while the monologue is open, even if it writes a dialogue tag of its own", () => {
    const extractor = new DialogueStreamExtractor();
    expect(extractor.push(`<internal_monologue>I could say <external_dialogue>this`)).toBe("");
    expect(extractor.push(` but I won't</external_dialogue> no.`)).toBe("");
    expect(extractor.push(`</internal_monologue><external_dialogue>Real answer.</external_dialogue>`)).toBe("Real answer.");
  });

  it("waits while a fence line stands before the dialogue", () => {
    const extractor = new DialogueStreamExtractor();
    expect(extractor.push("```\n<external_dialogue>inside a fence")).toBe("");
  });

  it("holds back a partial closing tag", () => {
    const extractor = new DialogueStreamExtractor();
    expect(extractor.push("<external_dialogue>Hi there</exter")).toBe("Hi there");
    expect(extractor.push("nal_dialogue>")).toBe("");
  });

  it("stops one short of the cut, so the ellipsis the parser adds still extends what was released", () => {
    const extractor = new DialogueStreamExtractor(10);
    const out = extractor.push(`<external_dialogue>${"a".repeat(30)}`);
    expect(out).toBe("a".repeat(9));
    const parsed = parsePipelineAnswer(`<external_dialogue>${"a".repeat(30)}</external_dialogue>`, PIPELINE_STEPS, { maxDialogueChars: 10 });
    expect(extractor.finish(parsed.dialogue)).toBe("…");
  });
});
