import { describe, expect, it } from "vitest";
import { createAnthropicModel, toAnthropicMessages } from "../../../runtime/providers/anthropic.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { failure, modelOverWire } from "../../support/wire/providerFixture.ts";

const KEY = "sk-ant-test-SECRET-4f9a1c7e";
const MODEL = "claude-test-1";

const wire = modelOverWire(startAnthropicServer, (baseURL) =>
  createAnthropicModel({ apiKey: KEY, baseURL, defaultModel: MODEL, timeoutMs: 5_000 }),
);

const user = (content: string) => ({ messages: [{ role: "user" as const, content }] });

describe("anthropic provider over the real SDK", () => {
  it("streams chunks in order and the final text is their concatenation", async () => {
    wire.server.enqueue({
      type: "reply",
      text: "The soul wakes slowly",
      chunkDelayMs: 15,
      usage: { inputTokens: 42, outputTokens: 5 },
    });
    const stream = wire.model.stream(user("wake up"));
    const chunks: string[] = [];
    const arrivals: number[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      arrivals.push(performance.now());
    }
    const final = await stream.final;

    expect(chunks).toEqual(["The", " soul", " wakes", " slowly"]);
    expect(final.text).toBe(chunks.join(""));
    // They arrived spread out, not as one buffered lump at the end.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(30);
    expect(final.usage).toEqual({ inputTokens: 42, outputTokens: 5 });
    expect(final).toMatchObject({ provider: "anthropic", model: MODEL, stopReason: "end_turn" });
    expect(wire.server.requests[0]?.body?.["stream"]).toBe(true);
  });

  it("completes without streaming, with usage from the response", async () => {
    wire.server.enqueue({ type: "reply", text: "A whole answer.", usage: { inputTokens: 11, outputTokens: 4 } });
    const completion = await wire.model.complete(user("hi"));
    expect(completion).toMatchObject({ text: "A whole answer.", usage: { inputTokens: 11, outputTokens: 4 }, provider: "anthropic" });
    expect(wire.server.requests[0]?.body?.["stream"]).toBe(false);
  });

  it("puts system messages in `system`, merges same-role turns and folds names", async () => {
    wire.server.enqueue({ type: "reply", text: "ok" });
    await wire.model.complete({
      model: "claude-other",
      maxTokens: 77,
      messages: [
        { role: "system", content: "You are Samantha." },
        { role: "user", content: "hello", name: "kevin" },
        { role: "user", content: "are you there?" },
        { role: "system", content: "Be brief." },
        { role: "assistant", content: "yes" },
      ],
    });
    const req = wire.server.requests[0]!;
    expect(req.body?.["system"]).toBe("You are Samantha.\n\nBe brief.");
    expect(req.body?.["messages"]).toEqual([
      { role: "user", content: "kevin: hello\n\nare you there?" },
      { role: "assistant", content: "yes" },
    ]);
    expect(req.body).toMatchObject({ model: "claude-other", max_tokens: 77 });
    // SDK 1.x sends the API key as a bearer token (0.x used `x-api-key`).
    expect(req.headers["authorization"]).toBe(`Bearer ${KEY}`);
    expect(req.headers["anthropic-version"]).toBeTruthy();
  });

  it("sends a system-only prompt as the user turn", () => {
    expect(toAnthropicMessages([{ role: "system", content: "Think." }])).toEqual({
      messages: [{ role: "user", content: "Think." }],
    });
  });

  it("maps 429 to rate_limit with retry-after, and the SDK does not retry on its own", async () => {
    wire.server.enqueue({ type: "error", status: 429, message: "slow down", retryAfter: "7" });
    const error = await failure(wire.model.complete(user("hi")));
    expect(error).toMatchObject({ kind: "rate_limit", status: 429, retryAfterMs: 7000, provider: "anthropic" });
    expect(error.retryable).toBe(true);
    expect(wire.server.requests).toHaveLength(1);
  });

  it.each([
    [500, "server"],
    [529, "server"],
    [503, "server"],
    [401, "auth"],
    [403, "auth"],
    [400, "bad_request"],
    [404, "bad_request"],
  ] as const)("maps HTTP %i to %s", async (status, kind) => {
    wire.server.enqueue({ type: "error", status });
    const error = await failure(wire.model.complete(user("hi")));
    expect(error.kind).toBe(kind);
    expect(error.status).toBe(status);
    expect(wire.server.requests).toHaveLength(1);
  });

  it("reports a connection dropped mid-stream as a `stream` failure after the chunks it got", async () => {
    wire.server.enqueue({ type: "disconnect", text: "one two three four", afterChunks: 2 });
    const stream = wire.model.stream(user("hi"));
    const chunks: string[] = [];
    const error = await failure(
      (async () => {
        for await (const c of stream) chunks.push(c);
      })(),
    );
    expect(chunks).toEqual(["one", " two"]);
    expect(error.kind).toBe("stream");
    await expect(stream.final).rejects.toBe(error);
  });

  it("treats a body that ends before message_stop as a broken stream", async () => {
    wire.server.enqueue({ type: "truncate", text: "cut short here", afterChunks: 1 });
    const error = await failure(wire.model.stream(user("hi")).final);
    expect(error.kind).toBe("stream");
    expect(error.message).toContain("message_stop");
  });

  it("classifies an in-stream overloaded error event as a server failure", async () => {
    wire.server.enqueue({ type: "streamError", text: "a b c", afterChunks: 1, errorType: "overloaded_error" });
    const error = await failure(wire.model.stream(user("hi")).final);
    expect(error.kind).toBe("server");
  });

  it("fails with `timeout` when the server hangs past the request deadline", async () => {
    wire.server.enqueue({ type: "hang" });
    const started = performance.now();
    const error = await failure(wire.model.complete({ ...user("hi"), timeoutMs: 150 }));
    const elapsed = performance.now() - started;
    expect(error.kind).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(2_000);
  });

  it("times out a stream that stalls after its first chunks", async () => {
    wire.server.enqueue({ type: "reply", text: "slow slow slow", chunkDelayMs: 3_000 });
    const stream = wire.model.stream({ ...user("hi"), timeoutMs: 400 });
    const chunks: string[] = [];
    const error = await failure(
      (async () => {
        for await (const c of stream) chunks.push(c);
      })(),
    );
    expect(chunks).toEqual(["slow"]);
    expect(error.kind).toBe("timeout");
  });

  it("fails with `aborted` when the caller's signal fires", async () => {
    wire.server.enqueue({ type: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(wire.model.complete({ ...user("hi"), signal: controller.signal }));
    expect(error.kind).toBe("aborted");
    expect(error.retryable).toBe(false);
  });

  it("refuses to start without a key, and names the variable rather than any value", () => {
    const saved = process.env["ANTHROPIC_API_KEY"];
    delete process.env["ANTHROPIC_API_KEY"];
    try {
      expect(() => createAnthropicModel({ baseURL: wire.server.url })).toThrow(/ANTHROPIC_API_KEY/);
    } finally {
      if (saved !== undefined) process.env["ANTHROPIC_API_KEY"] = saved;
    }
  });

  it("reads the key and base URL from the environment by default", async () => {
    const saved = { key: process.env["ANTHROPIC_API_KEY"], url: process.env["ANTHROPIC_BASE_URL"] };
    process.env["ANTHROPIC_API_KEY"] = "sk-ant-from-env-123456";
    process.env["ANTHROPIC_BASE_URL"] = wire.server.url;
    try {
      wire.server.enqueue({ type: "reply", text: "env ok" });
      const fromEnv = createAnthropicModel({ defaultModel: MODEL });
      expect((await fromEnv.complete(user("hi"))).text).toBe("env ok");
      expect(wire.server.requests[0]?.headers["authorization"]).toBe("Bearer sk-ant-from-env-123456");
    } finally {
      for (const [name, value] of [
        ["ANTHROPIC_API_KEY", saved.key],
        ["ANTHROPIC_BASE_URL", saved.url],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
