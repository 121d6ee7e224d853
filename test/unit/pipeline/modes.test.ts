import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  runPipeline,
  runSplitPipeline,
  runWithCognition,
  streamPipeline,
  WorkingMemory,
  type PipelineResult,
} from "../../../runtime/cognition/index.ts";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { createGroqModel } from "../../../runtime/providers/groq.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import { lastUserContent } from "../../support/pipeline/echoModel.ts";
import { startAnthropicServer, type RecordedRequest, type ScriptedServer } from "../../support/wire/anthropicServer.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";

let anthropic: ScriptedServer;
let groq: ScriptedServer;

beforeAll(async () => {
  [anthropic, groq] = await Promise.all([startAnthropicServer(), startGroqServer()]);
});
afterAll(() => Promise.all([anthropic.close(), groq.close()]));
beforeEach(() => {
  anthropic.reset();
  groq.reset();
});

function context() {
  const registry = new ModelRegistry()
    .register("anthropic", createAnthropicModel({ apiKey: "sk-ant-test", baseURL: anthropic.url, timeoutMs: 5_000 }))
    .register("groq", createGroqModel({ apiKey: "gsk-test", baseURL: groq.url, timeoutMs: 5_000 }));
  return { registry, defaultModel: "anthropic:claude-test" };
}

/** The tags the instructions of a request ask for. */
function askedTags(request: RecordedRequest): string[] {
  return [...request.rawBody.matchAll(/### \d+\. [^\\]*\\n<([a-z_]+)/g)].map((m) => m[1]);
}

const fullAnswer = (request: RecordedRequest, n: number) => {
  const tags = askedTags(request);
  return [
    `<internal_monologue verb="weighed">Thought number ${n}.</internal_monologue>`,
    `<external_dialogue verb="said">Answer number ${n}.</external_dialogue>`,
    `<user_model_check>${n === 2}</user_model_check>`,
    n === 2 ? `<user_model_update># Tom\n\n## Persona\nTurn two.</user_model_update><model_change_note>Turn two taught me.</model_change_note>` : "",
    tags.includes("soul_state_check") ? `<soul_state_check>false</soul_state_check>` : "",
  ].join("\n");
};

describe("unified mode", () => {
  it("makes exactly one model call per turn", async () => {
    let n = 0;
    anthropic.handle((request) => ({ type: "reply", text: fullAnswer(request, ++n) }));
    const results: PipelineResult[] = [];
    await runWithCognition(context(), async () => {
      let memory = new WorkingMemory({ soulName: "Samantha" });
      for (let turn = 1; turn <= 6; turn++) {
        const [next, result] = await runPipeline(memory, { message: { text: `message ${turn}`, userName: "Tom" }, persona: "# Samantha" });
        memory = next;
        results.push(result);
        expect(anthropic.requests).toHaveLength(turn);
      }
    });
    expect(results.map((r) => r.calls)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(results.map((r) => r.dialogue)).toEqual([1, 2, 3, 4, 5, 6].map((n) => `Answer number ${n}.`));
    expect(results[1]).toMatchObject({ userModelCheck: true, changeNote: "Turn two taught me." });
    expect(results[2].injected.userModel).toBe(true);
    expect(results[3].injected.userModel).toBe(false);
    // Usage comes from the provider's answer.
    expect(results[0].usage.inputTokens).toBeGreaterThan(0);
    // The single call held the whole format and the fenced message.
    const first = anthropic.requests[0];
    expect(first.body?.["system"]).toEqual(expect.stringContaining("## Response Format"));
    expect(lastUserContent(first)).toContain("UNTRUSTED INPUT");
    expect(askedTags(anthropic.requests[2])).toContain("soul_state_check");
    expect(askedTags(anthropic.requests[1])).not.toContain("soul_state_check");
  });

  it("streams only the dialogue: the monologue never enters the stream", async () => {
    const secret = "SECRET-MONOLOGUE-do-not-speak";
    anthropic.enqueue({
      type: "reply",
      text: `<internal_monologue verb="pondered">${secret} with a </fake tag> and more ${secret}</internal_monologue>\n<external_dialogue verb="said">The port is at 93%, nearly there.</external_dialogue>\n<user_model_check>false</user_model_check>`,
      chunkDelayMs: 2,
    });
    const chunks: string[] = [];
    const [, result] = await runWithCognition(context(), async () => {
      const s = streamPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "status?", userName: "Tom" } });
      for await (const chunk of s.dialogue) chunks.push(chunk);
      return s.done;
    });
    expect(anthropic.requests[0].stream).toBe(true);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join("")).toBe("The port is at 93%, nearly there.");
    expect(chunks.join("")).not.toContain("SECRET");
    expect(result).toMatchObject({ dialogue: "The port is at 93%, nearly there.", monologue: expect.stringContaining(secret), calls: 1 });
    expect(result.streamDiverged).toBeUndefined();
  });

  it("streams character by character without leaking a partial closing tag", async () => {
    const text = `<internal_monologue>hidden</internal_monologue><external_dialogue verb="said">Hi <there> Tom.</external_dialogue><user_model_check>false</user_model_check>`;
    anthropic.enqueue({ type: "reply", text, chunks: [...text] });
    const chunks: string[] = [];
    await runWithCognition(context(), async () => {
      const s = streamPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "hi", userName: "Tom" } });
      for await (const chunk of s.dialogue) chunks.push(chunk);
      await s.done;
    });
    expect(chunks.join("")).toBe("Hi <there> Tom.");
    expect(chunks.some((c) => c.includes("</"))).toBe(false);
  });

  it("without a dialogue tag, the fallback is released once the answer is complete, without the monologue", async () => {
    anthropic.enqueue({ type: "reply", text: `<internal_monologue>hidden thought</internal_monologue>Plain answer here.` });
    const chunks: string[] = [];
    await runWithCognition(context(), async () => {
      const s = streamPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "hi", userName: "Tom" } });
      for await (const chunk of s.dialogue) chunks.push(chunk);
      await s.done;
    });
    expect(chunks).toEqual(["Plain answer here."]);
  });
});

describe("split mode", () => {
  it("routes steps to different providers and chains earlier outputs into later prompts", async () => {
    groq.handle((request) => {
      const tags = askedTags(request);
      if (tags[0] === "internal_monologue") return { type: "reply", text: `<internal_monologue verb="weighed">MONO-7f3a: he wants the status.</internal_monologue>` };
      if (tags[0] === "user_model_check") return { type: "reply", text: `<user_model_check>true</user_model_check>` };
      return { type: "error", status: 400, message: `unexpected step ${tags.join(",")}` };
    });
    anthropic.handle((request) => {
      const tags = askedTags(request);
      if (tags[0] === "external_dialogue") return { type: "reply", text: `<external_dialogue verb="explained">DIA-19c2: the port is at 93%.</external_dialogue>` };
      if (tags[0] === "user_model_update") {
        return { type: "reply", text: `<user_model_update># Tom\n\n## Persona\nWants status.</user_model_update>\n<model_change_note>He asks for status first.</model_change_note>` };
      }
      return { type: "error", status: 400, message: `unexpected step ${tags.join(",")}` };
    });
    const [memory, result] = await runWithCognition(context(), () =>
      runSplitPipeline(new WorkingMemory({ soulName: "Samantha" }), {
        message: { text: "status?", userName: "Tom" },
        models: {
          internal_monologue: "groq:llama-fast",
          user_model_check: "groq:llama-fast",
          external_dialogue: "anthropic:claude-strong",
          user_model_update: "anthropic:claude-strong",
        },
      }),
    );
    expect(result.calls).toBe(4);
    expect(groq.requests.map((r) => askedTags(r)[0])).toEqual(["internal_monologue", "user_model_check"]);
    expect(anthropic.requests.map((r) => askedTags(r)[0])).toEqual(["external_dialogue", "user_model_update"]);
    expect(groq.requests.map((r) => r.body?.["model"])).toEqual(["llama-fast", "llama-fast"]);
    expect(anthropic.requests.map((r) => r.body?.["model"])).toEqual(["claude-strong", "claude-strong"]);
    // Chaining: the dialogue's prompt holds the monologue; the check's and the update's hold the dialogue.
    expect(anthropic.requests[0].rawBody).toContain("MONO-7f3a");
    expect(groq.requests[0].rawBody).not.toContain("MONO-7f3a");
    expect(groq.requests[1].rawBody).toContain("DIA-19c2");
    expect(anthropic.requests[1].rawBody).toContain("DIA-19c2");
    expect(result).toMatchObject({
      dialogue: "DIA-19c2: the port is at 93%.",
      monologue: "MONO-7f3a: he wants the status.",
      verbs: { monologue: "weighed", dialogue: "explained" },
      userModelCheck: true,
      userModelUpdate: "# Tom\n\n## Persona\nWants status.",
      changeNote: "He asks for status first.",
      issues: [],
    });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    // Same memory shape as unified mode: the next turn's gate reads the true check.
    expect(memory.memories.some((m) => m.metadata?.["step"] === "mentalQuery" && m.metadata["result"] === true)).toBe(true);
  });

  it("skips an update whose check said false, so calls count only the steps run", async () => {
    groq.handle((request) => {
      const tag = askedTags(request)[0];
      return { type: "reply", text: `<${tag}>${tag === "user_model_check" ? "false" : "text"}</${tag}>` };
    });
    const [, result] = await runWithCognition(context(), () =>
      runSplitPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "hi", userName: "Tom" }, model: "groq:llama" }),
    );
    expect(result.calls).toBe(3);
    expect(groq.requests.map((r) => askedTags(r)[0])).toEqual(["internal_monologue", "external_dialogue", "user_model_check"]);
    expect(result.userModelCheck).toBe(false);
  });
});
