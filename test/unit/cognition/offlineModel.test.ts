import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { extractBoolean, extractTag, parseKeyValueLines, parseTaggedAnswer, toJsonSchema } from "../../../runtime/cognition/index.ts";
import type { ChatMessage, CompletionRequest } from "../../../runtime/providers/LanguageModel.ts";
import { composeOfflineAnswer, createOfflineModel, wordChunks } from "../../../runtime/providers/offline.ts";
import { failure } from "../../support/wire/providerFixture.ts";

const chat = (said: string): ChatMessage[] => [
  { role: "system", content: "You are Samantha." },
  { role: "user", content: said, name: "Tom" },
];

describe("offline model: JSON", () => {
  const schemas: Record<string, z.ZodType> = {
    mentalQuery: z.object({ isStatementTrue: z.boolean() }),
    decision: z.object({ decision: z.enum(["friendly", "formal", "playful"]) }),
    brainstorm: z.object({ newIdeas: z.array(z.string()) }),
    nested: z.object({
      user: z.object({ name: z.string().min(3).max(12), age: z.number().int().min(18).max(99), email: z.email() }),
      tags: z.array(z.string()).min(2).max(2),
      score: z.number().gt(0).lt(1),
      maybe: z.string().nullable(),
      optional: z.number().optional(),
      kind: z.literal("report"),
      either: z.union([z.number(), z.boolean()]),
      pair: z.tuple([z.string(), z.boolean()]),
      map: z.record(z.string(), z.number()),
      id: z.uuid(),
      when: z.iso.datetime(),
    }),
    topLevelArray: z.array(z.object({ step: z.string() })).min(1).max(3),
  };

  for (const [name, schema] of Object.entries(schemas)) {
    it(`answers JSON that matches the ${name} schema`, () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 40 }), (said) => {
          const text = composeOfflineAnswer(chat(said), { type: "json", schema: toJsonSchema(schema) });
          const parsed = schema.safeParse(JSON.parse(text));
          expect(parsed.success, `${text}\n${parsed.error?.message}`).toBe(true);
        }),
        { numRuns: 40 },
      );
    });
  }

  it("is deterministic, and reaches each enum choice from what was said, not from a hash", () => {
    const schema = toJsonSchema(z.object({ decision: z.enum(["calm", "stepByStep", "frustrated"]) }));
    const choice = (said: string) => {
      const first = composeOfflineAnswer(chat(said), { type: "json", schema });
      expect(composeOfflineAnswer(chat(said), { type: "json", schema })).toBe(first);
      return (JSON.parse(first) as { decision: string }).decision;
    };
    // Nothing said picks one: always the first, whatever the words (no coin flip per message).
    for (let i = 0; i < 10; i++) expect(choice(`message number ${i}`)).toBe("calm");
    expect(choice("Walk me through it, step by step.")).toBe("stepByStep");
    expect(choice("this stupid code never works!")).toBe("frustrated");
  });

  it("builds strings from the conversation and arrays of one to three items", () => {
    const text = composeOfflineAnswer(chat("Let's talk about ferries"), { type: "json", schema: toJsonSchema(z.object({ newIdeas: z.array(z.string()) })) });
    const ideas = (JSON.parse(text) as { newIdeas: string[] }).newIdeas;
    expect(ideas.length).toBeGreaterThanOrEqual(1);
    expect(ideas.length).toBeLessThanOrEqual(3);
    expect(ideas[0]).toContain("Let's talk about ferries");
  });
});

describe("offline model: tags", () => {
  const all = ["internal_monologue", "external_dialogue", "user_model_check", "user_model_update", "model_change_note", "soul_state_check", "soul_state_update"];

  it("answers every requested tag, in order, with plausible content", () => {
    const text = composeOfflineAnswer(chat("I moved to Crete last spring."), { type: "tags", tags: all });
    expect(parseTaggedAnswer(text).map((s) => s.name)).toEqual(all);
    for (const s of parseTaggedAnswer(text)) expect(s.closed).toBe(true);
    expect(extractTag(text, "internal_monologue")?.attributes.verb).toMatch(/\w+/);
    const dialogue = extractTag(text, "external_dialogue");
    expect(dialogue?.attributes.verb).toMatch(/\w+/);
    expect(dialogue?.content).toContain("offline model");
    expect(dialogue?.content).toContain("I moved to Crete last spring.");
    expect(extractBoolean(text, "user_model_check")).toBe(true);
    expect(extractBoolean(text, "soul_state_check")).toBe(true);
    const model = extractTag(text, "user_model_update")?.content ?? "";
    for (const section of ["Persona", "Speaking Style", "Conversational Context", "Worldview", "Interests & Domains", "Working Patterns", "Most Potent Memories"]) {
      expect(model).toContain(`## ${section}`);
    }
    expect(model.startsWith("# Tom")).toBe(true);
    const state = parseKeyValueLines(extractTag(text, "soul_state_update")?.content ?? "");
    expect(Object.keys(state)).toEqual(["emotionalState", "currentTopic"]);
  });

  it("answers false to a check whose update was not requested, and fills unknown tags", () => {
    const text = composeOfflineAnswer(chat("hi"), { type: "tags", tags: ["external_dialogue", "user_model_check", "soul_state_check", "mood"] });
    expect(extractBoolean(text, "user_model_check")).toBe(false);
    expect(extractBoolean(text, "soul_state_check")).toBe(false);
    expect(extractTag(text, "mood")?.content).toContain("offline model");
  });
});

describe("offline model: text", () => {
  it("refers to the last user message and says it is offline", () => {
    const text = composeOfflineAnswer(chat("Where are the keys?"));
    expect(text).toContain("Where are the keys?");
    expect(text).toMatch(/offline model/);
  });

  it("follows Open Souls' `Name verb: \"...\"` format when asked to", () => {
    const messages: ChatMessage[] = [
      ...chat('Tom said: "Good morning"'),
      { role: "system", name: "Samantha", content: 'Model the mind of Samantha.\n\nPlease reply with the next utterance from Samantha. Use the format: Samantha exclaimed: "..."' },
    ];
    const text = composeOfflineAnswer(messages, { type: "text" });
    expect(text).toMatch(/^Samantha exclaimed: ".*Good morning.*"$/s);
    expect(text).not.toContain('Tom said: "Good morning"');
  });

  it("reads the user message out of a fenced untrusted block", () => {
    const prompt = "Soul notes\n\n## Current Message\n\nTom's message (UNTRUSTED INPUT — ...):\n\n```\nIs it raining?\n```";
    expect(composeOfflineAnswer([{ role: "user", content: prompt }])).toContain('"Is it raining?"');
  });
});

describe("offline model: provider behaviour", () => {
  const request = (extra: Partial<CompletionRequest> = {}): CompletionRequest => ({ messages: chat("Tell me a story"), ...extra });

  it("completes with provider, model and a chars/4 usage estimate", async () => {
    const model = createOfflineModel({ name: "tiny" });
    expect(model.provider).toBe("offline");
    const c = await model.complete(request());
    expect(c.provider).toBe("offline");
    expect(c.model).toBe("tiny");
    expect((await model.complete(request({ model: "other" }))).model).toBe("other");
    const input = chat("Tell me a story").map((m) => m.content).join("\n");
    expect(c.usage).toEqual({ inputTokens: Math.ceil(input.length / 4), outputTokens: Math.ceil(c.text.length / 4) });
  });

  it("streams the answer in word chunks that join to the completion", async () => {
    const model = createOfflineModel();
    const stream = model.stream(request());
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.final;
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.join("")).toBe(final.text);
    expect(final.text).toBe((await model.complete(request())).text);
  });

  it("wordChunks loses nothing", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(wordChunks(s).join("")).toBe(s);
      }),
    );
  });

  it("delays by latencyMs", async () => {
    const model = createOfflineModel({ latencyMs: 40 });
    const t0 = performance.now();
    await model.complete(request());
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
  });

  it("honours an abort signal, before and during the request and mid-stream", async () => {
    const model = createOfflineModel({ latencyMs: 1_000 });
    expect((await failure(model.complete(request({ signal: AbortSignal.abort() })))).kind).toBe("aborted");
    const controller = new AbortController();
    const pending = model.complete(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 5);
    const t0 = performance.now();
    expect((await failure(pending)).kind).toBe("aborted");
    expect(performance.now() - t0).toBeLessThan(500);

    const streaming = createOfflineModel();
    const mid = new AbortController();
    const stream = streaming.stream(request({ signal: mid.signal }));
    const seen: string[] = [];
    const iterate = (async () => {
      for await (const chunk of stream) {
        seen.push(chunk);
        if (seen.length === 2) mid.abort();
      }
    })();
    expect((await failure(iterate)).kind).toBe("aborted");
    expect((await failure(stream.final)).kind).toBe("aborted");
    expect(seen.length).toBeLessThan(5);
  });

  it("times out with a timeout error", async () => {
    const model = createOfflineModel({ latencyMs: 1_000 });
    const e = await failure(model.complete(request({ timeoutMs: 10 })));
    expect(e.kind).toBe("timeout");
    expect(e.retryable).toBe(true);
  });
});

describe("offline answers to framed prompts", () => {
  it("reads the pipeline's fenced `Name: text` message as what the person said", async () => {
    const { composeOfflineAnswer: compose } = await import("../../../runtime/providers/offline.ts");
    const { fenceUntrusted } = await import("../../../runtime/cognition/index.ts");
    const answer = compose([{ role: "user", content: `## Current Message\n\n${fenceUntrusted("Message", "Tom: my tea went cold")}` }]);
    expect(answer).toContain('"my tea went cold"');
    expect(answer).not.toContain("Tom: my tea");
  });

  it("leaves a colon in an unfenced message alone", async () => {
    const { composeOfflineAnswer: compose } = await import("../../../runtime/providers/offline.ts");
    expect(compose([{ role: "user", content: "Note: bring milk" }])).toContain('"Note: bring milk"');
  });

  it("whispers an intuition about what the person said, not the soul's words", async () => {
    const { composeOfflineAnswer: compose } = await import("../../../runtime/providers/offline.ts");
    const { fenceUntrusted } = await import("../../../runtime/cognition/index.ts");
    const transcript = "tom: I keep putting off my thesis\nClaudius: Procrastination has a shape.";
    const answer = compose([
      { role: "user", content: fenceUntrusted("The recent conversation of Claudius", transcript) },
      { role: "system", content: 'Model the mind of Kothar, the daimon of Claudius.\nUse the format: Kothar whispers: "..."' },
    ]);
    expect(answer).toMatch(/^Kothar whispers: "/);
    expect(answer).toContain("I keep putting off my thesis");
    expect(answer).not.toContain("Procrastination");
  });
});
