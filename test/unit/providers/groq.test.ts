import { describe, expect, it } from "vitest";
import { createGroqModel } from "../../../runtime/providers/groq.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import { failure, modelOverWire } from "../../support/wire/providerFixture.ts";

const KEY = "gsk_test_SECRET_b81d22aa";
const MODEL = "llama-test-8b";

const wire = modelOverWire(startGroqServer, (baseURL) =>
  createGroqModel({ apiKey: KEY, baseURL, defaultModel: MODEL, timeoutMs: 5_000 }),
);

const user = (content: string) => ({ messages: [{ role: "user" as const, content }] });

describe("groq provider over the real SDK", () => {
  it("streams chunks in order, with usage from x_groq on the last chunk", async () => {
    wire.server.enqueue({ type: "reply", text: "Fast tokens flow", chunkDelayMs: 10, usage: { inputTokens: 31, outputTokens: 3 } });
    const stream = wire.model.stream(user("go"));
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.final;

    expect(chunks).toEqual(["Fast", " tokens", " flow"]);
    expect(final.text).toBe(chunks.join(""));
    expect(final).toMatchObject({ provider: "groq", model: MODEL, stopReason: "stop", usage: { inputTokens: 31, outputTokens: 3 } });
  });

  it("calls the OpenAI-compatible path with a bearer key, system messages and names in place", async () => {
    wire.server.enqueue({ type: "reply", text: "ok" });
    await wire.model.complete({
      temperature: 0.2,
      maxTokens: 64,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "hi", name: "kevin" },
      ],
    });
    const req = wire.server.requests[0]!;
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
    wire.server.enqueue({ type: "reply", text: "Whole.", usage: { inputTokens: 9, outputTokens: 2 } });
    const completion = await wire.model.complete(user("hi"));
    expect(completion).toMatchObject({ text: "Whole.", usage: { inputTokens: 9, outputTokens: 2 }, stopReason: "stop" });
    expect(wire.server.requests[0]?.body?.["stream"]).toBe(false);
  });

  it("estimates usage when the provider reports none", async () => {
    wire.server.enqueue({ type: "reply", text: "twelve chars", omitUsage: true });
    const final = await wire.model.stream(user("sixteen chars!!!")).final;
    expect(final.usage.outputTokens).toBe(3); // ceil(12 / 4)
    expect(final.usage.inputTokens).toBe(4); // ceil(16 / 4)
  });

  it("maps 429 to rate_limit with retry-after", async () => {
    wire.server.enqueue({ type: "error", status: 429, retryAfter: "2" });
    const error = await failure(wire.model.complete(user("hi")));
    expect(error).toMatchObject({ kind: "rate_limit", status: 429, retryAfterMs: 2000, provider: "groq" });
    expect(wire.server.requests).toHaveLength(1);
  });

  it.each([
    [500, "server"],
    [503, "server"],
    [401, "auth"],
    [422, "bad_request"],
  ] as const)("maps HTTP %i to %s without an SDK retry", async (status, kind) => {
    wire.server.enqueue({ type: "error", status });
    const error = await failure(wire.model.stream(user("hi")).final);
    expect(error.kind).toBe(kind);
    expect(wire.server.requests).toHaveLength(1);
  });

  it("reports a mid-stream disconnect as a `stream` failure", async () => {
    wire.server.enqueue({ type: "disconnect", text: "alpha beta gamma", afterChunks: 1 });
    const stream = wire.model.stream(user("hi"));
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
    wire.server.enqueue({ type: "truncate", text: "alpha beta", afterChunks: 2 });
    const error = await failure(wire.model.stream(user("hi")).final);
    expect(error.kind).toBe("stream");
  });

  it("fails with `timeout` when the server hangs", async () => {
    wire.server.enqueue({ type: "hang" });
    const error = await failure(wire.model.stream({ ...user("hi"), timeoutMs: 120 }).final);
    expect(error.kind).toBe("timeout");
  });
});
