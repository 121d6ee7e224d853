import { describe, expect, it } from "vitest";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import type { CompletionRequest, LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { UsageMeter, estimateTokens } from "../../../runtime/providers/usage.ts";

const scripted = (provider: string, input: number, output: number): LanguageModel => {
  const answer = (request: CompletionRequest) => ({
    text: "abc",
    usage: { inputTokens: input, outputTokens: output },
    provider,
    model: request.model ?? "default",
  });
  return {
    provider,
    complete: async (request) => answer(request),
    stream: (request) =>
      createCompletionStream(provider, async ({ emit }) => {
        emit("a");
        emit("bc");
        return answer(request);
      }),
  };
};

describe("UsageMeter", () => {
  it("accumulates per provider and model", () => {
    const meter = new UsageMeter();
    meter.record("anthropic", "sonnet", { inputTokens: 10, outputTokens: 5 });
    meter.record("anthropic", "sonnet", { inputTokens: 1, outputTokens: 2 });
    meter.record("anthropic", "haiku", { inputTokens: 3, outputTokens: 3 });
    meter.record("groq", "llama", { inputTokens: 100, outputTokens: 50 });

    expect(meter.entries()).toEqual([
      { provider: "anthropic", model: "sonnet", inputTokens: 11, outputTokens: 7, calls: 2 },
      { provider: "anthropic", model: "haiku", inputTokens: 3, outputTokens: 3, calls: 1 },
      { provider: "groq", model: "llama", inputTokens: 100, outputTokens: 50, calls: 1 },
    ]);
    expect(meter.total({ provider: "anthropic" })).toEqual({ inputTokens: 14, outputTokens: 10, calls: 3 });
    expect(meter.total({ provider: "anthropic", model: "haiku" })).toEqual({ inputTokens: 3, outputTokens: 3, calls: 1 });
    expect(meter.total()).toEqual({ inputTokens: 114, outputTokens: 60, calls: 4 });
    meter.reset();
    expect(meter.total()).toEqual({ inputTokens: 0, outputTokens: 0, calls: 0 });
  });

  it("hands out copies, so callers cannot skew the totals", () => {
    const meter = new UsageMeter();
    meter.record("groq", "llama", { inputTokens: 1, outputTokens: 1 });
    meter.entries()[0]!.inputTokens = 999;
    expect(meter.total().inputTokens).toBe(1);
  });

  it("meters completions and streams through a wrapped model", async () => {
    const meter = new UsageMeter();
    const model = meter.wrap(scripted("groq", 7, 3));
    await model.complete({ model: "llama", messages: [] });
    const stream = model.stream({ model: "llama", messages: [] });
    const chunks: string[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toEqual(["a", "bc"]);
    expect(meter.total({ provider: "groq", model: "llama" })).toEqual({ inputTokens: 14, outputTokens: 6, calls: 2 });
  });

  it("estimates about four characters per token", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
  });
});
