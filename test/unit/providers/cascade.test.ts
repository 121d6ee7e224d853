import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { CascadeError, createCascade } from "../../../runtime/providers/cascade.ts";
import { createGroqModel } from "../../../runtime/providers/groq.ts";
import type { LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import { failure } from "../../support/wire/providerFixture.ts";
import type { ScriptedServer } from "../../support/wire/scriptedServer.ts";

const user = { messages: [{ role: "user" as const, content: "hello" }] };

let first: ScriptedServer;
let second: ScriptedServer;
let anthropic: LanguageModel;
let groq: LanguageModel;
let clock: number;
const now = () => clock;

beforeAll(async () => {
  [first, second] = await Promise.all([startAnthropicServer(), startGroqServer()]);
});
afterAll(async () => {
  await Promise.all([first.close(), second.close()]);
});
beforeEach(() => {
  first.reset();
  second.reset();
  clock = 1_000_000;
  anthropic = createAnthropicModel({ apiKey: "sk-ant-cascade-000111", baseURL: first.url, defaultModel: "claude-test", timeoutMs: 3_000 });
  groq = createGroqModel({ apiKey: "gsk_cascade_000222", baseURL: second.url, defaultModel: "llama-test", timeoutMs: 3_000 });
});

describe("cascade", () => {
  it("falls through to the next provider when the first answers 500", async () => {
    first.enqueue({ type: "error", status: 500 });
    second.enqueue({ type: "reply", text: "groq to the rescue" });
    const cascade = createCascade([anthropic, groq], { now });

    const completion = await cascade.complete(user);
    expect(completion).toMatchObject({ text: "groq to the rescue", provider: "groq" });
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(cascade.provider).toBe("cascade");
  });

  it("skips a penalised provider until its penalty expires, then prefers it again", async () => {
    const cascade = createCascade([anthropic, groq], { now, penaltyMs: 30_000 });
    first.enqueue({ type: "error", status: 429, retryAfter: "3" });
    await cascade.complete(user);

    expect(cascade.status().order.map((m) => [m.provider, m.penalisedUntil])).toEqual([
      ["groq", null],
      ["anthropic", 1_030_000],
    ]);

    clock += 29_999; // still inside the penalty: anthropic is not even asked
    expect((await cascade.complete(user)).provider).toBe("groq");
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(2);

    clock += 2; // penalty over: back in its configured place
    expect(cascade.status().order.map((m) => m.provider)).toEqual(["anthropic", "groq"]);
    expect((await cascade.complete(user)).provider).toBe("anthropic");
    expect(first.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(2);
  });

  it("still tries a penalised provider as a last resort", async () => {
    const cascade = createCascade([anthropic, groq], { now });
    first.enqueue({ type: "error", status: 503 });
    await cascade.complete(user); // anthropic penalised
    second.enqueue({ type: "error", status: 500 });
    first.enqueue({ type: "reply", text: "degraded but here" });

    const completion = await cascade.complete(user);
    expect(completion.text).toBe("degraded but here");
    // Its success lifts the penalty.
    expect(cascade.status().order.find((m) => m.provider === "anthropic")?.penalisedUntil).toBeNull();
  });

  it("throws a CascadeError naming each provider's failure when all fail", async () => {
    first.enqueue({ type: "error", status: 429, message: "too many requests" });
    second.enqueue({ type: "error", status: 500, message: "groq is down" });
    const cascade = createCascade([anthropic, groq], { now });

    const error = await failure(cascade.complete(user), CascadeError);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.failures.map((f) => [f.provider, (f.error as ProviderError).kind])).toEqual([
      ["anthropic", "rate_limit"],
      ["groq", "server"],
    ]);
    expect(error.message).toMatch(/anthropic \[rate_limit\].*too many requests/);
    expect(error.message).toMatch(/groq \[server\].*groq is down/);
    expect(error.kind).toBe("server");
    expect(error.retryable).toBe(true);
  });

  it("keeps the shared kind when every provider failed the same way", async () => {
    first.enqueue({ type: "error", status: 401 });
    second.enqueue({ type: "error", status: 403 });
    const error = await failure(createCascade([anthropic, groq], { now }).complete(user), CascadeError);
    expect(error.kind).toBe("auth");
    expect(error.retryable).toBe(false);
  });

  it("falls through on a stream that broke before its first chunk", async () => {
    first.enqueue({ type: "disconnect", text: "lost", afterChunks: 0 });
    second.enqueue({ type: "reply", text: "clean stream" });
    const stream = createCascade([anthropic, groq], { now }).stream(user);
    const chunks: string[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toEqual(["clean", " stream"]);
    expect((await stream.final).provider).toBe("groq");
  });

  it("surfaces a stream error instead of falling through once chunks were yielded", async () => {
    first.enqueue({ type: "disconnect", text: "one two three", afterChunks: 2 });
    const cascade = createCascade([anthropic, groq], { now });
    const stream = cascade.stream(user);
    const chunks: string[] = [];
    const error = await failure(
      (async () => {
        for await (const c of stream) chunks.push(c);
      })(),
    );
    expect(error).not.toBeInstanceOf(CascadeError);
    expect(error.kind).toBe("stream");
    expect(error.message).toContain("after 2 chunk(s)");
    expect(chunks).toEqual(["one", " two"]);
    expect(second.requests).toHaveLength(0);
    // The provider that broke is still penalised.
    expect(cascade.status().order[0]?.provider).toBe("groq");
  });

  it("falls through on a bad request without penalising the provider", async () => {
    first.enqueue({ type: "error", status: 400, message: "prompt too long for this model" });
    second.enqueue({ type: "reply", text: "bigger context" });
    const cascade = createCascade([anthropic, groq], { now });
    expect((await cascade.complete(user)).provider).toBe("groq");
    expect(cascade.status().order.map((m) => [m.provider, m.penalisedUntil])).toEqual([
      ["anthropic", null],
      ["groq", null],
    ]);
  });

  it("treats an answer that fails validation as a format failure and falls through", async () => {
    first.enqueue({ type: "reply", text: "not json" });
    second.enqueue({ type: "reply", text: '{"ok":true}' });
    const cascade = createCascade([anthropic, groq], {
      now,
      validate: (c) => (c.text.startsWith("{") ? undefined : "expected a JSON object"),
    });
    expect((await cascade.complete(user)).text).toBe('{"ok":true}');
    expect(cascade.status().order.at(-1)).toMatchObject({ provider: "anthropic", lastFailure: "anthropic: expected a JSON object" });
  });

  it("stops at a caller abort instead of trying the next provider", async () => {
    first.enqueue({ type: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 40);
    const cascade = createCascade([anthropic, groq], { now });
    const error = await failure(cascade.complete({ ...user, signal: controller.signal }));
    expect(error.kind).toBe("aborted");
    expect(second.requests).toHaveLength(0);
    expect(cascade.status().order[0]?.penalisedUntil).toBeNull();
  });

  it("sends each member its own model id, not the request's", async () => {
    const cascade = createCascade(
      [
        { model: anthropic, modelId: "claude-cheap" },
        { model: groq, modelId: "llama-big" },
      ],
      { now },
    );
    first.enqueue({ type: "error", status: 500 });
    await cascade.complete({ ...user, model: "something-else" });
    expect(first.requests[0]?.body?.["model"]).toBe("claude-cheap");
    expect(second.requests[0]?.body?.["model"]).toBe("llama-big");
    expect(cascade.status().order.map((m) => m.provider)).toEqual(["groq:llama-big", "anthropic:claude-cheap"]);
  });
});
