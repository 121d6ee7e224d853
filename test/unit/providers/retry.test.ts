import { describe, expect, it } from "vitest";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import type { Completion, CompletionRequest, LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import { retryDelay, withRetry } from "../../../runtime/providers/retry.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { failure, modelOverWire } from "../../support/wire/providerFixture.ts";

const KEY = "sk-ant-retry-SECRET-77aa01";
const user = { messages: [{ role: "user" as const, content: "hi" }] };

const wire = modelOverWire(startAnthropicServer, (baseURL) =>
  createAnthropicModel({ apiKey: KEY, baseURL, defaultModel: "claude-test", timeoutMs: 5_000 }),
);

describe("withRetry against the real SDK", () => {
  it("waits at least the server's retry-after after a 429, then succeeds", async () => {
    wire.server.enqueue({ type: "error", status: 429, message: "rate limited", retryAfter: "1" }, { type: "reply", text: "second time lucky" });
    const model = withRetry(wire.model, { retries: 2, baseDelayMs: 10, maxDelayMs: 5_000 });
    const completion = await model.complete(user);

    expect(completion.text).toBe("second time lucky");
    expect(wire.server.requests).toHaveLength(2);
    const waited = wire.server.requests[1]!.at - wire.server.requests[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(1_000);
    expect(waited).toBeLessThan(3_000); // generous: only the lower bound is the contract
  });

  it("retries a 500 and streams the successful attempt's chunks once", async () => {
    wire.server.enqueue({ type: "error", status: 500 }, { type: "reply", text: "steady now" });
    const stream = withRetry(wire.model, { baseDelayMs: 5 }).stream(user);
    const chunks: string[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toEqual(["steady", " now"]);
    expect((await stream.final).text).toBe("steady now");
    expect(wire.server.requests).toHaveLength(2);
  });

  it("retries a stream that broke before its first chunk", async () => {
    wire.server.enqueue({ type: "disconnect", text: "never seen", afterChunks: 0 }, { type: "reply", text: "fresh start" });
    const final = await withRetry(wire.model, { baseDelayMs: 5 }).stream(user).final;
    expect(final.text).toBe("fresh start");
    expect(wire.server.requests).toHaveLength(2);
  });

  it("does not retry a stream that broke after chunks were yielded", async () => {
    wire.server.enqueue({ type: "disconnect", text: "half an answer", afterChunks: 2 }, { type: "reply", text: "must not be used" });
    const stream = withRetry(wire.model, { baseDelayMs: 5 }).stream(user);
    const chunks: string[] = [];
    const error = await failure(
      (async () => {
        for await (const c of stream) chunks.push(c);
      })(),
    );
    expect(error.kind).toBe("stream");
    expect(chunks).toEqual(["half", " an"]);
    expect(wire.server.requests).toHaveLength(1);
    expect(wire.server.pending).toBe(1);
  });

  it.each([
    [401, "auth"],
    [400, "bad_request"],
  ] as const)("never retries %i (%s)", async (status, kind) => {
    wire.server.enqueue({ type: "error", status }, { type: "reply", text: "must not be used" });
    const error = await failure(withRetry(wire.model, { baseDelayMs: 5 }).complete(user));
    expect(error.kind).toBe(kind);
    expect(wire.server.requests).toHaveLength(1);
  });

  it("gives up after `retries` retries with the last failure", async () => {
    wire.server.enqueue({ type: "error", status: 500 }, { type: "error", status: 502 }, { type: "error", status: 529 });
    const error = await failure(withRetry(wire.model, { retries: 2, baseDelayMs: 5 }).complete(user));
    expect(error.status).toBe(529);
    expect(wire.server.requests).toHaveLength(3);
  });

  it("stops waiting when the caller aborts during the backoff", async () => {
    wire.server.enqueue({ type: "error", status: 429, retryAfter: "5" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    const started = performance.now();
    const error = await failure(
      withRetry(wire.model, { maxDelayMs: 10_000 }).complete({ ...user, signal: controller.signal }),
    );
    expect(error.kind).toBe("aborted");
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(wire.server.requests).toHaveLength(1);
  });
});

describe("retry delays", () => {
  const rateLimited = (retryAfterMs?: number) =>
    new ProviderError({ provider: "fake", kind: "rate_limit", message: "429", ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });

  it("grows exponentially with jitter inside [step/2, step]", () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 10_000 };
    expect(retryDelay(1, rateLimited(), { ...opts, random: () => 0 })).toBe(50);
    expect(retryDelay(1, rateLimited(), { ...opts, random: () => 0.999999 })).toBe(100);
    expect(retryDelay(3, rateLimited(), { ...opts, random: () => 0 })).toBe(200);
    expect(retryDelay(3, rateLimited(), { ...opts, random: () => 0.999999 })).toBe(400);
  });

  it("treats retry-after as a floor, capped by maxDelayMs", () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 2_000, random: () => 0.5 };
    expect(retryDelay(1, rateLimited(1_500), opts)).toBe(1_500);
    expect(retryDelay(1, rateLimited(60_000), opts)).toBe(2_000);
    expect(retryDelay(10, rateLimited(), opts)).toBeLessThanOrEqual(2_000);
  });

  it("passes the computed delays to the sleeper and reports each retry", async () => {
    let calls = 0;
    const flaky: LanguageModel = {
      provider: "fake",
      async complete(): Promise<Completion> {
        calls++;
        if (calls < 3) throw rateLimited(calls === 1 ? 700 : undefined);
        return { text: "ok", usage: { inputTokens: 1, outputTokens: 1 }, provider: "fake", model: "m" };
      },
      stream(request: CompletionRequest) {
        return createCompletionStream("fake", () => this.complete(request));
      },
    };
    const slept: number[] = [];
    const retried: number[] = [];
    const model = withRetry(flaky, {
      baseDelayMs: 100,
      maxDelayMs: 5_000,
      random: () => 0,
      sleep: async (ms) => {
        slept.push(ms);
      },
      onRetry: (info) => retried.push(info.attempt),
    });
    expect((await model.complete(user)).text).toBe("ok");
    expect(slept).toEqual([700, 100]);
    expect(retried).toEqual([1, 2]);
  });
});
