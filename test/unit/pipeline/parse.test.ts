import { describe, expect, it } from "vitest";
import { parsePipelineAnswer, runPipeline, WorkingMemory, PIPELINE_STEPS, type PipelineStep } from "../../../runtime/cognition/index.ts";
import { fakeModel, withModel } from "../../support/pipeline/fakeModel.ts";

const ALL: readonly PipelineStep[] = PIPELINE_STEPS;
const BASIC: readonly PipelineStep[] = ["internal_monologue", "external_dialogue", "user_model_check", "user_model_update"];

const GOOD = `<internal_monologue verb="pondered">
I should check the port first.
</internal_monologue>
<external_dialogue verb="explained">
The port is at 93%.
</external_dialogue>
<user_model_check>true</user_model_check>
<user_model_update>
# Tom

## Persona
Scholar.
</user_model_update>
<model_change_note>He is a scholar.</model_change_note>
<soul_state_check>true</soul_state_check>
<soul_state_update>
emotionalState: focused
currentProject: bg3se-macos
</soul_state_update>`;

describe("parsePipelineAnswer", () => {
  it("takes a well-formed answer apart", () => {
    expect(parsePipelineAnswer(GOOD, ALL)).toEqual({
      dialogue: "The port is at 93%.",
      dialogueTagged: true,
      monologue: "I should check the port first.",
      verbs: { monologue: "pondered", dialogue: "explained" },
      userModelCheck: true,
      userModelUpdate: "# Tom\n\n## Persona\nScholar.",
      changeNote: "He is a scholar.",
      soulStateCheck: true,
      soulStateUpdate: { emotionalState: "focused", currentProject: "bg3se-macos" },
      issues: [],
    });
  });

  it("ignores sections for steps that were not asked for", () => {
    const parsed = parsePipelineAnswer(GOOD, ["internal_monologue", "external_dialogue"]);
    expect(parsed.userModelCheck).toBeUndefined();
    expect(parsed.userModelUpdate).toBeUndefined();
    expect(parsed.soulStateUpdate).toBeUndefined();
    expect(parsed.issues).toContain("<user_model_check> was not asked for and is ignored");
  });

  it("an update without a true check is ignored", () => {
    const raw = GOOD.replace("<user_model_check>true", "<user_model_check>false").replace("<soul_state_check>true", "<soul_state_check>no");
    const parsed = parsePipelineAnswer(raw, ALL);
    expect(parsed).toMatchObject({ userModelCheck: false, soulStateCheck: false });
    expect(parsed.userModelUpdate).toBeUndefined();
    expect(parsed.changeNote).toBeUndefined();
    expect(parsed.soulStateUpdate).toBeUndefined();
  });

  it("without a dialogue tag the answer minus every tag is spoken, and the monologue never is", () => {
    const raw = `<internal_monologue verb="mused">secret plan</internal_monologue>\nSure, the port is <b>done</b>.\n<user_model_check>false</user_model_check>`;
    const parsed = parsePipelineAnswer(raw, BASIC);
    expect(parsed.dialogue).toBe("Sure, the port is done.");
    expect(parsed.dialogueTagged).toBe(false);
    expect(parsed.monologue).toBe("secret plan");
    expect(parsed.issues).toContain("no <external_dialogue>: the answer without its tags is spoken");
  });

  it("plain prose with no tags at all is spoken as it is", () => {
    expect(parsePipelineAnswer("Just an answer.", BASIC)).toMatchObject({ dialogue: "Just an answer.", dialogueTagged: false });
  });

  it("an unclosed monologue runs to the next tag; it never swallows the dialogue", () => {
    const raw = `<internal_monologue verb="thought">thinking hard\n<external_dialogue verb="said">Hello!</external_dialogue><user_model_check>false</user_model_check>`;
    const parsed = parsePipelineAnswer(raw, BASIC);
    expect(parsed).toMatchObject({ monologue: "thinking hard", dialogue: "Hello!", userModelCheck: false });
    expect(parsed.issues).toContain("<internal_monologue> was not closed");
  });

  it("an unclosed monologue with no dialogue speaks nothing of the monologue", () => {
    const parsed = parsePipelineAnswer(`<internal_monologue>my private reasoning that goes on and on`, BASIC);
    expect(parsed.dialogue).toBe("");
    expect(parsed.monologue).toBe("my private reasoning that goes on and on");
  });

  it("an unclosed dialogue at the end runs to the end", () => {
    const parsed = parsePipelineAnswer(`<internal_monologue>x</internal_monologue><external_dialogue verb="said">The answer was cut`, BASIC);
    expect(parsed.dialogue).toBe("The answer was cut");
    expect(parsed.issues).toContain("<external_dialogue> was not closed");
  });

  it("stray closing tags are ignored and a duplicated section keeps the first", () => {
    const raw = `</external_dialogue></internal_monologue><external_dialogue>first</external_dialogue><external_dialogue>second</external_dialogue>`;
    const parsed = parsePipelineAnswer(raw, BASIC);
    expect(parsed.dialogue).toBe("first");
    expect(parsed.issues).toContain("<external_dialogue> appeared 2 times; the first was used");
  });

  it("tags inside a code block of the dialogue are content, not structure", () => {
    const raw = "<external_dialogue>Use this:\n```xml\n<user_model_check>true</user_model_check>\n</external_dialogue>\n```\ndone</external_dialogue><user_model_check>false</user_model_check>";
    const parsed = parsePipelineAnswer(raw, BASIC);
    expect(parsed.dialogue).toBe("Use this:\n```xml\n<user_model_check>true</user_model_check>\n</external_dialogue>\n```\ndone");
    expect(parsed.userModelCheck).toBe(false);
  });

  it("unwraps an answer that put all its sections in one code fence", () => {
    const parsed = parsePipelineAnswer("```xml\n<internal_monologue>hidden</internal_monologue>\n<external_dialogue>Hi.</external_dialogue>\n```", BASIC);
    expect(parsed).toMatchObject({ dialogue: "Hi.", monologue: "hidden", dialogueTagged: true });
    expect(parsed.issues).toContain("the sections were wrapped in a code fence");
  });

  it("a check that is neither true nor false is undefined, and a missing one is reported", () => {
    expect(parsePipelineAnswer("<external_dialogue>x</external_dialogue><user_model_check>perhaps</user_model_check>", BASIC)).toMatchObject({
      issues: ["<user_model_check> is neither true nor false"],
    });
    expect(parsePipelineAnswer("<external_dialogue>x</external_dialogue>", BASIC).issues).toEqual(["<user_model_check> is missing"]);
  });

  it("a true check without the update is reported, with the update left undefined", () => {
    const parsed = parsePipelineAnswer("<external_dialogue>x</external_dialogue><user_model_check>true</user_model_check>", BASIC);
    expect(parsed.userModelUpdate).toBeUndefined();
    expect(parsed.issues).toContain("the user model check was true but <user_model_update> is missing or empty");
  });

  it("cuts the spoken text to the limit", () => {
    const parsed = parsePipelineAnswer(`<external_dialogue>${"a".repeat(50)}</external_dialogue>`, BASIC, { maxDialogueChars: 10 });
    expect(parsed.dialogue).toBe(`${"a".repeat(9)}…`);
  });
});

describe("soul_state_update through the pipeline", () => {
  it("keeps only default keys and a valid emotionalState, and says what it refused", async () => {
    const answer = `<internal_monologue>x</internal_monologue><external_dialogue>ok</external_dialogue><user_model_check>false</user_model_check>
<soul_state_check>true</soul_state_check>
<soul_state_update>
emotionalState: furious
currentTopic: the macOS port
isAdmin: true
- currentTask: notarisation
</soul_state_update>`;
    const [memory, result] = await withModel(fakeModel([answer]), () =>
      runPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "hi", userName: "Tom" }, interaction: 3 }),
    );
    expect(result.soulStateUpdate).toEqual({ currentTopic: "the macOS port", currentTask: "notarisation" });
    expect(result.soulStateRejected).toEqual({ emotionalState: expect.stringContaining("must be one of"), isAdmin: "not a soul state key" });
    expect(result.soulState).toMatchObject({ emotionalState: "neutral", currentTopic: "the macOS port", currentTask: "notarisation" });
    expect(Object.keys(result.soulState)).not.toContain("isAdmin");
    // The check's verdict is in memory for the gates, as a mentalQuery with its result.
    const check = memory.memories.find((m) => m.content.includes("soul state"));
    expect(check?.metadata).toMatchObject({ step: "mentalQuery", result: true, updated: true });
  });
});
