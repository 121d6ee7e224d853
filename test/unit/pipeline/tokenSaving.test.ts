import { describe, expect, it } from "vitest";
import { measureConversation, CHECK_TRUE_TURNS, MESSAGES, USER_MODEL } from "../../support/pipeline/conversation.ts";

describe("Samantha-Dreams saves prompt tokens (deterministic, so a regression fails here)", () => {
  it("uses at least 30% fewer prompt tokens than always injecting, over a scripted 20-turn conversation", async () => {
    const m = await measureConversation();
    expect(MESSAGES).toHaveLength(20);
    expect(CHECK_TRUE_TURNS.size).toBe(3);
    // A realistic model: the seven sections, a few hundred words.
    expect(USER_MODEL.split(/\s+/).length).toBeGreaterThan(250);
    expect(m.turns.filter((t) => t.userModelInjected).map((t) => t.turn)).toEqual([1, 7, 13, 17]);
    // Whole requests, the thread history included.
    expect(m.saving).toBeGreaterThanOrEqual(0.3);
    // The sections the pipeline assembles (the reference's build_prompt), history left out.
    expect(m.sectionSaving).toBeGreaterThanOrEqual(0.4);
  });

  it("makes exactly one model call per turn in unified mode", async () => {
    const m = await measureConversation();
    expect(m.modelCalls).toBe(20);
    expect(m.turns.every((t) => t.calls === 1)).toBe(true);
  });
});
