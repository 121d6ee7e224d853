import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGroqModel } from "../../../runtime/providers/groq.ts";
import type { LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import { startGroqServer, type ScriptedServer } from "../../support/wire/groqServer.ts";

const KEY = "gsk_test_SECRET_b81d22aa";
const MODEL = "llama-test-8b";

let server: ScriptedServer;
let model: LanguageModel;

beforeAll(async () => {
  server = await startGroqServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  model = createGroqModel({ apiKey: KEY, baseURL: server.url, defaultModel: MODEL, timeoutMs: 5_000 });
});

const user = (content: string) => ({ messages: [{ role: "user" as const, content }] });

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("groq provider over the real SDK", () => {
  it("streams chunks in order, with usage from x_groq on the last chunk", async () => {
    server.enqueue({ type: "reply", text: "Fast tokens flow", chunkDelayMs: 10, usage: { inputTokens: 31, outputTokens: 3 } });
    const stream = model.stream(user("go"));
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.final;

    expect(chunks).toEqual(["Fast", " tokens", " flow"]);
    expect(final.text).toBe(chunks.join(""));
    expect(final).toMatchObject({ provider: "groq", model: MODEL, stopReason: "stop", usage: { inputTokens: 31, outputTokens: 3 } });
  });

  it("calls the OpenAI-compatible path with a bearer key, system messages and names in place", async () => {
    server.enqueue({ type: "reply", text: "ok" });
    await model.complete({
      temperature: 0.2,
      maxTokens: 64,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "hi", name: "kevin" },
      ],
    });
    const req = server.requests[0]!;
    expect(req.path).toBe("/openai/v1/chat/completions");
    expect(req.headers["authorization"]).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({
      model: MODEL,
      temperature: 0.2,
      max_completion_tokens: 64,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "hi", name: "kevin" },
      ],
    });
  });

  it("completes without streaming, with usage from the response", async () => {
    server.enqueue({ type: "reply", text: "Whole.", usage: { inputTokens: 9, outputTokens: 2 } });
    const completion = await model.complete(user("hi"));
    expect(completion).toMatchObject({ text: "Whole.", usage: { inputTokens: 9, outputTokens: 2 }, stopReason: "stop" });
    expect(server.requests[0]?.body?.["stream"]).toBe(false);
  });

  it("estimates usage when the provider reports none", async () => {
    server.enqueue({ type: "reply", text: "twelve chars", omitUsage: true });
    const final = await model.stream(user("sixteen chars!!!")).final;
    expect(final.usage.outputTokens).toBe(3); // ceil(12 / 4)
    expect(final.usage.inputTokens).toBe(4); // ceil(16 / 4)
  });

  it("maps 429 to rate_limit with retry-after", async () => {
    server.enqueue({ type: "error", status: 429, retryAfter: "2" });
    const error = await failure(model.complete(user("hi")));
    expect(error).toMatchObject({ kind: "rate_limit", status: 429, retryAfterMs: 2000, provider: "groq" });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [500, "server"],
    [503, "server"],
    [401, "auth"],
    [422, "bad_request"],
  ] as const)("maps HTTP %i to %s without an SDK retry", async (status, kind) => {
    server.enqueue({ type: "error", status });
    const error = await failure(model.stream(user("hi")).final);
    expect(error.kind).toBe(kind);
    expect(server.requests).toHaveLength(1);
  });

  it("reports a mid-stream disconnect as a `stream` failure", async () => {
    server.enqueue({ type: "disconnect", text: "alpha beta gamma", afterChunks: 1 });
    const stream = model.stream(user("hi"));
    const chunks: string[] = [];
    const error = await failure(
      (async () => {
        for await (const c of stream) chunks.push(c);
      })(),
    );
    expect(chunks).toEqual(["alpha"]);
    expect(error.kind).toBe("stream");
  });

  it("treats a stream that ends without finish_reason as broken", async () => {
    server.enqueue({ type: "truncate", text: "alpha beta", afterChunks: 2 });
    const error = await failure(model.stream(user("hi")).final);
    expect(error.kind).toBe("stream");
  });

  it("fails with `timeout` when the server hangs", async () => {
    server.enqueue({ type: "hang" });
    const error = await failure(model.stream({ ...user("hi"), timeoutMs: 120 }).final);
    expect(error.kind).toBe("timeout");
  });
});
