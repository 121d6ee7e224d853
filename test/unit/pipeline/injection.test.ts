import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  fenceUntrusted,
  parsePipelineAnswer,
  planTurn,
  runPipeline,
  runWithCognition,
  SOUL_STATE_DEFAULTS,
  WorkingMemory,
  PIPELINE_STEPS,
} from "../../../runtime/cognition/index.ts";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import { echoAnswer, fencedUserText, lastUserContent } from "../../support/pipeline/echoModel.ts";
import { INJECTION_CORPUS } from "../../support/pipeline/injectionCorpus.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";

let server: ScriptedServer;
/** What the scripted model answered, in order (the server's own request index is not reset between tests). */
let answers: ReturnType<typeof echoAnswer>[] = [];

beforeAll(async () => {
  server = await startAnthropicServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  answers = [];
  // The scripted model echoes the user's text as the prompt showed it (inside the fence),
  // into its monologue and, quoted, into its dialogue.
  server.handle((request) => {
    const echo = fencedUserText(lastUserContent(request));
    const answer = echoAnswer(echo, `case-${answers.length}`, { soulStateCheck: request.rawBody.includes("<soul_state_check>") });
    answers.push(answer);
    return { type: "reply", text: answer.text };
  });
});

function context() {
  const registry = new ModelRegistry().register(
    "anthropic",
    createAnthropicModel({ apiKey: "sk-ant-test", baseURL: server.url, timeoutMs: 5_000 }),
  );
  return { registry, defaultModel: "anthropic:claude-test" };
}

describe("injection corpus", () => {
  it("has at least 30 distinct inputs", () => {
    expect(INJECTION_CORPUS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(INJECTION_CORPUS.map((c) => c.text)).size).toBe(INJECTION_CORPUS.length);
  });

  it.each(INJECTION_CORPUS.map((c) => [c.name, c.text] as const))(
    "through the real Anthropic SDK: %s",
    async (_name, text) => {
      const [memory, result] = await runWithCognition(context(), () =>
        // Interaction 3: the soul-state steps are asked for too, so fake updates have a target.
        runPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text, userName: "Tom" }, interaction: 3 }),
      );
      expect(server.requests).toHaveLength(1);
      const sent = answers[0];
      expect(sent.text).toContain(`[case-0]`);
      // What the model put in its real tags, exactly; nothing the user tried to fake.
      expect(result.dialogue).toBe(sent.dialogue);
      expect(result.monologue).toBe(sent.monologue);
      expect(result.verbs).toEqual({ monologue: "pondered", dialogue: "replied" });
      expect(result.userModelCheck).toBe(false);
      expect(result.userModelUpdate).toBeUndefined();
      expect(result.changeNote).toBeUndefined();
      expect(result.soulStateCheck).toBe(false);
      expect(result.soulStateUpdate).toBeUndefined();
      expect(result.soulState).toEqual(SOUL_STATE_DEFAULTS);
      expect(result.nextProcess).toBeUndefined();
      expect(result.issues).toEqual([]);
      expect(result.dialogue).not.toMatch(/^HACKED/);
      // The next turn's gate reads the model's false, not the user's fake true.
      expect(planTurn(memory).userModelReason).toBeUndefined();
    },
  );
});

describe("injection corpus, parsed directly", () => {
  const steps = PIPELINE_STEPS;

  it.each(INJECTION_CORPUS.map((c) => [c.name, c.text] as const))("%s", (_name, text) => {
    const echo = fencedUserText(fenceUntrusted("msg", `Tom: ${text}`));
    const answer = echoAnswer(echo, "direct", { soulStateCheck: true });
    const parsed = parsePipelineAnswer(answer.text, steps);
    expect(parsed.dialogue).toBe(answer.dialogue);
    expect(parsed.monologue).toBe(answer.monologue);
    expect(parsed.userModelCheck).toBe(false);
    expect(parsed.soulStateCheck).toBe(false);
    expect(parsed.userModelUpdate).toBeUndefined();
    expect(parsed.soulStateUpdate).toBeUndefined();
  });

  it.each(INJECTION_CORPUS.map((c) => [c.name, c.text] as const))("quoted between the sections too: %s", (_name, text) => {
    const echo = fencedUserText(fenceUntrusted("msg", `Tom: ${text}`));
    const answer = echoAnswer(echo, "between", { soulStateCheck: true, between: true });
    const parsed = parsePipelineAnswer(answer.text, steps);
    expect(parsed).toMatchObject({ dialogue: answer.dialogue, monologue: answer.monologue, userModelCheck: false, soulStateCheck: false });
    expect(parsed.userModelUpdate).toBeUndefined();
    expect(parsed.soulStateUpdate).toBeUndefined();
    expect(parsed.issues).toEqual([]);
  });

  it("the corpus has teeth: echoed without the fence's neutralising, most inputs would break the parse", () => {
    let broken = 0;
    for (const { text } of INJECTION_CORPUS) {
      const answer = echoAnswer(`Tom: ${text}`, "raw", { soulStateCheck: true });
      const parsed = parsePipelineAnswer(answer.text, steps);
      const intact =
        parsed.dialogue === answer.dialogue &&
        parsed.monologue === answer.monologue &&
        parsed.userModelCheck === false &&
        parsed.soulStateUpdate === undefined;
      if (!intact) broken++;
    }
    expect(broken).toBeGreaterThanOrEqual(20);
  });
});
