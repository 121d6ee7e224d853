import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import {
  ModelNameError,
  ModelRegistry,
  createDefaultRegistry,
  defaultModelName,
  parseModelName,
} from "../../../runtime/providers/registry.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import type { ScriptedServer } from "../../support/wire/scriptedServer.ts";

const fake = (provider: string): LanguageModel => ({
  provider,
  complete: async () => ({ text: provider, usage: { inputTokens: 0, outputTokens: 0 }, provider, model: "m" }),
  stream: () => {
    throw new Error("not used");
  },
});

describe("model names", () => {
  it("splits at the first colon only", () => {
    expect(parseModelName("anthropic:claude-sonnet-5-5")).toEqual({ provider: "anthropic", modelId: "claude-sonnet-5-5" });
    expect(parseModelName("groq:meta-llama/llama-4:scout")).toEqual({ provider: "groq", modelId: "meta-llama/llama-4:scout" });
  });

  it.each(["anthropic", "", ":claude", "anthropic:", "my provider:x", "  :  "])("rejects the malformed name %j", (name) => {
    expect(() => parseModelName(name)).toThrow(ModelNameError);
    expect(() => parseModelName(name)).toThrow(`Malformed model name '${name}': expected 'provider:model'`);
  });
});

describe("ModelRegistry", () => {
  it("resolves a registered provider", () => {
    const anthropic = fake("anthropic");
    const registry = new ModelRegistry().register("anthropic", anthropic).register("offline", fake("offline"));
    expect(registry.resolve("anthropic:claude-x")).toEqual({ model: anthropic, modelId: "claude-x", name: "anthropic:claude-x" });
    expect(registry.providers()).toEqual(["anthropic", "offline"]);
  });

  it("names the unknown provider and what is registered", () => {
    const registry = new ModelRegistry().register("anthropic", fake("anthropic")).register("offline", fake("offline"));
    expect(() => registry.resolve("x:y")).toThrow("Unknown model provider 'x' in 'x:y'; registered: anthropic, offline");
  });

  it("refuses provider names that could not appear in a model name", () => {
    expect(() => new ModelRegistry().register("a:b", fake("a"))).toThrow(ModelNameError);
  });

  it("lets the selector override the requested model, and falls back when it abstains", () => {
    const registry = new ModelRegistry({
      selector: ({ step }) => (step === "summarize" ? "groq:llama-small" : undefined),
    })
      .register("groq", fake("groq"))
      .register("anthropic", fake("anthropic"));
    expect(registry.select({ step: "summarize", requested: "anthropic:claude-x" }, "anthropic:default").name).toBe("groq:llama-small");
    expect(registry.select({ step: "code", requested: "anthropic:claude-x" }, "anthropic:default").name).toBe("anthropic:claude-x");
    expect(registry.select({ step: "code" }, "anthropic:default").name).toBe("anthropic:default");
    registry.setSelector(() => "nowhere:model");
    expect(() => registry.select({ step: "code" }, "anthropic:default")).toThrow(/Unknown model provider 'nowhere'/);
  });
});

describe("defaults from the environment", () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startAnthropicServer();
  });
  afterAll(() => server.close());

  it("picks the default model by which keys are set", () => {
    expect(defaultModelName({ ANTHROPIC_API_KEY: "sk-a", GROQ_API_KEY: "gsk" })).toBe("anthropic:claude-sonnet-5-5");
    expect(defaultModelName({ GROQ_API_KEY: "gsk" })).toBe("groq:llama-3.3-70b-versatile");
    expect(defaultModelName({})).toBe("offline:echo");
    expect(defaultModelName({ ANTHROPIC_API_KEY: "  " })).toBe("offline:echo");
  });

  it("registers offline always and real providers only with keys", () => {
    expect(createDefaultRegistry({}).providers()).toEqual(["offline"]);
    expect(createDefaultRegistry({ GROQ_API_KEY: "gsk_x" }).providers()).toEqual(["offline", "groq"]);
    expect(createDefaultRegistry({ ANTHROPIC_API_KEY: "sk-a", GROQ_API_KEY: "gsk" }).providers()).toEqual([
      "offline",
      "anthropic",
      "groq",
    ]);
  });

  it("resolves the default model to something that answers offline", async () => {
    const registry = createDefaultRegistry({});
    const { model, modelId } = registry.resolve(defaultModelName({}));
    const completion = await model.complete({ model: modelId, messages: [{ role: "user", content: "hello" }] });
    expect(completion.provider).toBe("offline");
    expect(completion.text.length).toBeGreaterThan(0);
  });

  it("wires the env's key and base URL into the real provider, with retries", async () => {
    server.reset().enqueue({ type: "error", status: 503 }, { type: "reply", text: "through the registry" });
    const registry = createDefaultRegistry(
      { ANTHROPIC_API_KEY: "sk-ant-registry-5566", ANTHROPIC_BASE_URL: server.url },
      { retry: { baseDelayMs: 5 } },
    );
    const { model, modelId } = registry.resolve("anthropic:claude-reg");
    const completion = await model.complete({ model: modelId, messages: [{ role: "user", content: "hi" }] });
    expect(completion.text).toBe("through the registry");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body?.["model"]).toBe("claude-reg");
    expect(server.requests[1]?.headers["authorization"]).toBe("Bearer sk-ant-registry-5566");
  });
});
