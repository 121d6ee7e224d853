import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CognitiveStepError,
  CONVERSATION_LABEL,
  UNTRUSTED_NOTICE,
  WorkingMemory,
  brainstorm,
  createCognitiveStep,
  decision,
  externalDialog,
  instruction,
  internalMonologue,
  mentalQuery,
  runWithCognition,
  summarize,
  type CognitionContext,
} from "../../../runtime/cognition/index.ts";
import type { Completion, CompletionRequest, CompletionStream, LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { createOfflineModel } from "../../../runtime/providers/offline.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";

/**
 * A stand-in for a real provider: answers from a script, one answer per call, and records
 * every request. Chunks are cut at the given points so tests control stream boundaries.
 */
function scriptedModel(answers: Array<string | { chunks: string[] } | Error>, provider = "scripted") {
  const requests: CompletionRequest[] = [];
  let call = 0;
  const next = (request: CompletionRequest) => {
    requests.push(request);
    const answer = answers[Math.min(call++, answers.length - 1)];
    if (answer instanceof Error) return answer;
    const chunks = typeof answer === "string" ? answer.split(/(?<= )/) : answer.chunks;
    return chunks;
  };
  const completion = (request: CompletionRequest, text: string): Completion => ({
    text,
    usage: { inputTokens: 10, outputTokens: text.length },
    provider,
    model: request.model ?? "script",
  });
  const model: LanguageModel = {
    provider,
    async complete(request) {
      const chunks = next(request);
      if (chunks instanceof Error) throw chunks;
      return completion(request, chunks.join(""));
    },
    stream(request): CompletionStream {
      const chunks = next(request);
      const final = chunks instanceof Error ? Promise.reject(chunks) : Promise.resolve(completion(request, chunks.join("")));
      final.catch(() => undefined);
      return {
        final,
        async *[Symbol.asyncIterator]() {
          if (chunks instanceof Error) throw chunks;
          for (const c of chunks) yield c;
        },
      };
    },
  };
  return { model, requests };
}

function context(extra: Partial<CognitionContext> = {}, models: Record<string, LanguageModel> = {}): CognitionContext {
  const registry = new ModelRegistry().register("offline", createOfflineModel());
  for (const [name, model] of Object.entries(models)) registry.register(name, model);
  return { registry, defaultModel: "offline:default", ...extra };
}

const start = new WorkingMemory({
  soulName: "Samantha",
  memories: [
    { role: "system", content: "You are Samantha, a curious soul." },
    { role: "user", content: 'Tom said: "What is the status of the BG3 port?"', name: "Tom" },
  ],
});

const offline = <T>(fn: () => Promise<T>, extra: Partial<CognitionContext> = {}) => runWithCognition(context(extra), fn);

describe("standard steps on the offline model", () => {
  it("externalDialog returns the utterance and appends `Soul said: \"...\"`", async () => {
    const [memory, said] = await offline(() => externalDialog(start, "Answer Tom."));
    expect(typeof said).toBe("string");
    expect(said).toContain("offline model");
    expect(said).toContain("What is the status of the BG3 port?");
    expect(said).not.toMatch(/^Samantha/);
    expect(said).not.toMatch(/^"|"$/);
    expect(memory.length).toBe(start.length + 1);
    expect(memory.at(-1)).toMatchObject({ role: "assistant", content: `Samantha said: "${said}"` });
    expect(start.length).toBe(2);
  });

  it("externalDialog takes a verb", async () => {
    const [memory, said] = await offline(() => externalDialog(start, { instructions: "Answer loudly.", verb: "shouted" }));
    expect(said).not.toMatch(/^Samantha shouted/);
    expect(memory.at(-1)?.content).toBe(`Samantha shouted: "${said}"`);
  });

  it("internalMonologue appends `Soul thought: \"...\"`", async () => {
    const [memory, thought] = await offline(() => internalMonologue(start, "Think about Tom's question."));
    expect(thought).toContain("offline model");
    expect(memory.at(-1)).toMatchObject({ role: "assistant", content: `Samantha thought: "${thought}"` });
    const [withVerb, pondered] = await offline(() => internalMonologue(start, { instructions: "Ponder.", verb: "pondered" }));
    expect(withVerb.at(-1)?.content).toBe(`Samantha pondered: "${pondered}"`);
  });

  it("mentalQuery returns a boolean and records the verdict", async () => {
    const [memory, verdict] = await offline(() => mentalQuery(start, "Tom is asking about a game port."));
    expect(typeof verdict).toBe("boolean");
    expect(memory.at(-1)?.content).toBe(
      `Samantha evaluated: "Tom is asking about a game port." and decided that the statement is ${verdict}`,
    );
    expect(memory.at(-1)?.metadata).toMatchObject({ step: "mentalQuery", result: verdict });
  });

  it("decision returns one of the choices, deterministically", async () => {
    const choices = ["friendly", "formal", "playful"];
    const [memory, choice] = await offline(() => decision(start, { description: "How should Samantha answer?", choices }));
    expect(choices).toContain(choice);
    expect(memory.at(-1)?.content).toBe(`Samantha decided: "${choice}"`);
    const [, again] = await offline(() => decision(start, { description: "How should Samantha answer?", choices }));
    expect(again).toBe(choice);
  });

  it("decision accepts an enum", async () => {
    enum Mood {
      Calm = "calm",
      Excited = "excited",
    }
    enum Level {
      Low,
      High,
    }
    const [, mood] = await offline(() => decision(start, { description: "Mood?", choices: Mood }));
    expect(Object.values(Mood) as string[]).toContain(mood);
    const [, level] = await offline(() => decision(start, { description: "Level?", choices: Level, verb: "chose" }));
    expect(["0", "1"]).toContain(level);
  });

  it("brainstorm returns a list of ideas", async () => {
    const [memory, ideas] = await offline(() => brainstorm(start, "Ways to speed up the port"));
    expect(Array.isArray(ideas)).toBe(true);
    expect(ideas.length).toBeGreaterThanOrEqual(1);
    expect(ideas.length).toBeLessThanOrEqual(3);
    for (const idea of ideas) expect(typeof idea).toBe("string");
    expect(memory.at(-1)?.content).toBe(`Samantha brainstormed: ${ideas.join("\n")}`);
  });

  it("instruction returns the raw answer and appends it", async () => {
    const [memory, answer] = await offline(() => instruction(start, "Say something about the port."));
    expect(answer).toContain("offline model");
    expect(memory.at(-1)).toMatchObject({ role: "assistant", content: answer });
  });

  it("summarize returns what the soul has learned so far, with or without extra instructions", async () => {
    const [memory, summary] = await offline(() => summarize(start));
    expect(summary).toContain("has learned so far");
    expect(summary).not.toMatch(/^Samantha summarized/);
    expect(memory.at(-1)?.content).toBe(`Samantha summarized: "${summary}"`);
    const [, withExtra] = await offline(() => summarize(start, "Keep it short."));
    expect(typeof withExtra).toBe("string");
  });

  it("steps wait for a pending memory before they run", async () => {
    const [pending, stream] = await offline(() => externalDialog(start, "Answer.", { stream: true }));
    for await (const _ of stream) {
      // drain
    }
    const [after, thought] = await offline(() => internalMonologue(pending, "Reflect."));
    expect(after.length).toBe(start.length + 2);
    expect(after.at(-1)?.content).toBe(`Samantha thought: "${thought}"`);
  });
});

describe("streaming", () => {
  it("streams chunks whose join equals the final value; the memory settles after", async () => {
    const [memory, stream, value] = await offline(() => externalDialog(start, "Answer Tom.", { stream: true }));
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    const final = await value;
    expect(chunks.join("")).toBe(final);
    await memory.finished;
    expect(memory.at(-1)?.content).toBe(`Samantha said: "${final}"`);
  });

  it("strips `Soul said:` and the quotes from a stream cut at awkward places", async () => {
    const { model } = scriptedModel([{ chunks: ["  Sam", "antha sa", "id softly", ':  "', "Hello", ' there, "friend"', '."', "  " ] }]);
    const [memory, stream, value] = await runWithCognition(context({ defaultModel: "scripted:x" }, { scripted: model }), () =>
      externalDialog(start, "Answer.", { stream: true }),
    );
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(await value).toBe('Hello there, "friend".');
    expect(chunks.join("")).toBe('Hello there, "friend".');
    await memory.finished;
    expect(memory.at(-1)?.content).toBe('Samantha said: "Hello there, "friend"."');
  });

  it("a stream that fails rejects the value and the memory's `finished`", async () => {
    const { model } = scriptedModel([new ProviderError({ provider: "scripted", kind: "stream", message: "connection dropped" })]);
    const [memory, stream, value] = await runWithCognition(context({ defaultModel: "scripted:x" }, { scripted: model }), () =>
      externalDialog(start, "Answer.", { stream: true }),
    );
    await expect(value).rejects.toThrow("connection dropped");
    await expect(memory.finished).rejects.toThrow("connection dropped");
    await expect(
      (async () => {
        for await (const _ of stream) {
          // drain
        }
      })(),
    ).rejects.toThrow("connection dropped");
  });

  it("a schema step cannot stream", async () => {
    await expect(offline(() => mentalQuery(start, "x", { stream: true }))).rejects.toThrow(CognitiveStepError);
  });
});

describe("answers that ignore the format", () => {
  const run = <T>(answers: string[], fn: () => Promise<T>) => {
    const scripted = scriptedModel(answers);
    return { scripted, result: runWithCognition(context({ defaultModel: "scripted:x" }, { scripted: scripted.model }), fn) };
  };

  it("strips a markdown fence around the JSON", async () => {
    const { scripted, result } = run(['Here you go:\n```json\n{ "isStatementTrue": true }\n```'], () => mentalQuery(start, "Tom is curious."));
    const [, verdict] = await result;
    expect(verdict).toBe(true);
    expect(scripted.requests).toHaveLength(1);
    expect(scripted.requests[0].format).toMatchObject({ type: "json" });
  });

  it("retries once when the model ignores the format, feeding the error back", async () => {
    const { scripted, result } = run(["I think it is true!", '{"isStatementTrue": false}'], () => mentalQuery(start, "Tom is curious."));
    const [memory, verdict] = await result;
    expect(verdict).toBe(false);
    expect(scripted.requests).toHaveLength(2);
    const retry = scripted.requests[1].messages;
    expect(retry.at(-2)).toMatchObject({ role: "assistant", content: "I think it is true!" });
    expect(retry.at(-1)?.content).toMatch(/not usable.*no JSON/);
    expect(memory.at(-1)?.content).toMatch(/decided that the statement is false$/);
  });

  it("fails with a CognitiveStepError naming the step when the model ignores the format twice", async () => {
    const { scripted, result } = run(["nope", '{"isStatementTrue": "maybe"}'], () => mentalQuery(start, "Tom is curious."));
    const error = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CognitiveStepError);
    expect((error as CognitiveStepError).step).toBe("mentalQuery");
    expect((error as Error).message).toMatch(/^mentalQuery: scripted:x ignored the requested format twice/);
    expect((error as Error).message).toContain("maybe");
    expect(scripted.requests).toHaveLength(2);
  });

  it("decision accepts a near miss but not a choice that is not offered", async () => {
    const choices = ["friendly", "formal"];
    const near = run(['{"decision": "Samantha decided: Formal"}'], () => decision(start, { description: "Tone?", choices }));
    expect((await near.result)[1]).toBe("formal");
    const wrong = run(['{"decision": "rude"}', '{"decision": "ruder"}'], () => decision(start, { description: "Tone?", choices }));
    await expect(wrong.result).rejects.toThrow(/^decision: /);
  });
});

describe("the cognition context", () => {
  it("sends the step's command last, in the soul's name, with the format hint", async () => {
    const scripted = scriptedModel(['Samantha said: "Hi."', '{"isStatementTrue": true}']);
    await runWithCognition(context({ defaultModel: "scripted:m1" }, { scripted: scripted.model }), async () => {
      await externalDialog(start, "Greet Tom.");
      await mentalQuery(start, "Tom is here.");
    });
    const [dialog, query] = scripted.requests;
    expect(dialog.model).toBe("m1");
    // The memory first: the soul's own as it is, the user's fenced as untrusted (untrustedMemory.test.ts).
    expect(dialog.messages[0]).toEqual({ role: "system", content: "You are Samantha, a curious soul." });
    expect(dialog.messages[1].content).toBe(
      `${CONVERSATION_LABEL} (${UNTRUSTED_NOTICE}):\n\n\`\`\`\nTom said: "What is the status of the BG3 port?"\n\`\`\``,
    );
    expect(dialog.messages.at(-1)).toMatchObject({ role: "system", name: "Samantha" });
    expect(dialog.messages.at(-1)?.content).toContain('Use the format: Samantha said: "..."');
    expect(dialog.messages.at(-1)?.content).toContain("Greet Tom.");
    expect(dialog.format).toEqual({ type: "text" });
    expect(query.format).toMatchObject({ type: "json", schema: { properties: { isStatementTrue: { type: "boolean" } } } });
  });

  it("a per-step model overrides the default, and the model selector overrides both", async () => {
    const a = scriptedModel(["from a"], "a");
    const b = scriptedModel(["from b"], "b");
    const seen: Array<{ step: string; soul: string; requested?: string }> = [];
    const ctx = context(
      {
        modelSelector: (info) => {
          seen.push(info);
          return info.step === "instruction" && info.requested === undefined ? "b:picked" : undefined;
        },
      },
      { a: a.model, b: b.model },
    );
    await runWithCognition(ctx, async () => {
      expect((await instruction(start, "x"))[1]).toBe("from b");
      expect((await instruction(start, "x", { model: "a:asked" }))[1]).toBe("from a");
      expect((await externalDialog(start, "x"))[1]).toContain("offline model");
    });
    expect(b.requests[0].model).toBe("picked");
    expect(a.requests[0].model).toBe("asked");
    expect(seen).toEqual([
      { step: "instruction", soul: "Samantha", requested: undefined },
      { step: "instruction", soul: "Samantha", requested: "a:asked" },
      { step: "externalDialog", soul: "Samantha", requested: undefined },
    ]);
  });

  it("reports usage for every model call, streamed or not, retries included", async () => {
    const calls: Array<{ step: string; provider: string; model: string; soul: string; input: number; output: number }> = [];
    const onUsage: CognitionContext["onUsage"] = (usage, info) => calls.push({ ...info, input: usage.inputTokens, output: usage.outputTokens });
    await offline(async () => {
      await externalDialog(start, "x");
      const [, , value] = await internalMonologue(start, "y", { stream: true });
      await value;
    }, { onUsage });
    expect(calls.map((c) => [c.step, c.provider, c.model, c.soul])).toEqual([
      ["externalDialog", "offline", "default", "Samantha"],
      ["internalMonologue", "offline", "default", "Samantha"],
    ]);
    for (const c of calls) {
      expect(c.input).toBeGreaterThan(10);
      expect(c.output).toBeGreaterThan(5);
    }
    const scripted = scriptedModel(["no json", '{"isStatementTrue": true}']);
    const retried: string[] = [];
    await runWithCognition(
      context({ defaultModel: "scripted:x", onUsage: (_u, info) => retried.push(info.step) }, { scripted: scripted.model }),
      () => mentalQuery(start, "x"),
    );
    expect(retried).toEqual(["mentalQuery", "mentalQuery"]);
  });

  it("the turn's signal aborts a step", async () => {
    const registry = new ModelRegistry().register("slow", createOfflineModel({ latencyMs: 5_000 }));
    const controller = new AbortController();
    const pending = runWithCognition({ registry, defaultModel: "slow:x", signal: controller.signal }, () => externalDialog(start, "x"));
    setTimeout(() => controller.abort(), 10);
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("aborted");
  });

  it("an unknown model fails clearly", async () => {
    await expect(offline(() => instruction(start, "x", { model: "nowhere:model" }))).rejects.toThrow(/Unknown model provider 'nowhere'/);
  });
});

describe("createCognitiveStep", () => {
  it("builds custom steps with a schema and an async stream processor (Open Souls style)", async () => {
    const shout = createCognitiveStep(
      (what: string) => ({
        command: `Shout ${what}`,
        streamProcessor: async (_memory: WorkingMemory, stream: AsyncIterable<string>) =>
          (async function* () {
            for await (const c of stream) yield c.toUpperCase();
          })(),
      }),
      { name: "shout" },
    );
    expect(shout.stepName).toBe("shout");
    const [, stream] = await offline(() => shout(start, "hello", { stream: true }));
    let text = "";
    for await (const c of stream) text += c;
    expect(text).toBe(text.toUpperCase());
    expect(text).toContain("OFFLINE MODEL");

    const facts = createCognitiveStep(
      () => ({
        command: "List facts",
        schema: z.object({ facts: z.array(z.object({ subject: z.string(), confidence: z.number().min(0).max(1) })).min(2) }),
        postProcess: (_m: WorkingMemory, r: { facts: Array<{ subject: string; confidence: number }> }) =>
          [{ role: "assistant" as const, content: `${r.facts.length} facts` }, r.facts] as const,
      }),
      { name: "facts" },
    );
    const [memory, list] = await offline(() => facts(start, undefined));
    expect(list.length).toBeGreaterThanOrEqual(2);
    for (const f of list) expect(f.confidence).toBeGreaterThanOrEqual(0);
    expect(memory.at(-1)?.content).toBe(`${list.length} facts`);
  });
});
