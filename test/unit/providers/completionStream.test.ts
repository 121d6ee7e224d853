import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import type { ScriptedServer } from "../../support/wire/scriptedServer.ts";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startAnthropicServer();
});
afterAll(() => server.close());

const done = (text: string) => ({ text, usage: { inputTokens: 1, outputTokens: 1 }, provider: "fake", model: "m" });

describe("CompletionStream plumbing", () => {
  it("cancels the HTTP request when the consumer breaks out early", async () => {
    server.reset().enqueue({ type: "reply", text: "one two three four five six", chunkDelayMs: 40 });
    const model = createAnthropicModel({ apiKey: "sk-ant-stream-1234", baseURL: server.url, defaultModel: "claude-test" });
    const stream = model.stream({ messages: [{ role: "user", content: "hi" }] });
    for await (const chunk of stream) {
      expect(chunk).toBe("one");
      break;
    }
    const error = await stream.final.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("aborted");
    await new Promise((r) => setTimeout(r, 30));
    expect(server.requests[0]?.clientClosedEarly).toBe(true);
  });

  it("does not start the producer until someone listens", async () => {
    let started = false;
    const stream = createCompletionStream("fake", async ({ emit }) => {
      started = true;
      emit("x");
      return done("x");
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toBe(false);
    expect((await stream.final).text).toBe("x");
    expect(started).toBe(true);
  });

  it("can be read through `final` alone, and iterated only once", async () => {
    const stream = createCompletionStream("fake", async ({ emit }) => {
      emit("a");
      emit("");
      emit("b");
      return done("ab");
    });
    const chunks: string[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toEqual(["a", "b"]);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/only once/);
  });

  it("a failure nobody awaits on `final` is not an unhandled rejection", async () => {
    const stream = createCompletionStream("fake", async () => {
      throw new ProviderError({ provider: "fake", kind: "server", message: "boom" });
    });
    const iterator = stream[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toThrow("boom");
    // vitest fails the run on an unhandled rejection; give one a chance to surface.
    await new Promise((r) => setTimeout(r, 20));
  });
});
