/**
 * The API key must never reach an error: not the message, not the stack, not the cause chain,
 * not a cascade's summary. The server here is hostile on purpose: it echoes the key back in
 * its error bodies, as a misconfigured proxy might.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { createCascade } from "../../../runtime/providers/cascade.ts";
import { createGroqModel } from "../../../runtime/providers/groq.ts";
import type { LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { withRetry } from "../../../runtime/providers/retry.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import { failure } from "../../support/wire/providerFixture.ts";
import type { Behaviour, ScriptedServer } from "../../support/wire/scriptedServer.ts";

const ANTHROPIC_KEY = "sk-ant-api03-TOPSECRET-a1b2c3d4e5";
const GROQ_KEY = "gsk_TOPSECRET_f6e5d4c3b2a1";

/** Everything an error exposes: message, stack, own fields, the cause chain, nested failures. */
function exposedText(error: unknown, seen = new Set<unknown>()): string {
  if (error === null || error === undefined || seen.has(error)) return "";
  seen.add(error);
  if (!(error instanceof Error)) return typeof error === "object" ? safeJson(error) : String(error);
  const own = Object.entries(error)
    .map(([k, v]) => `${k}=${v instanceof Error ? exposedText(v, seen) : Array.isArray(v) ? v.map((x) => exposedText(x?.error ?? x, seen)).join("|") : safeJson(v)}`)
    .join(" ");
  return [String(error), error.message, error.stack ?? "", own, exposedText(error.cause, seen)].join("\n");
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

let anthropicServer: ScriptedServer;
let groqServer: ScriptedServer;
let anthropic: LanguageModel;
let groq: LanguageModel;
let deadPort: string;

beforeAll(async () => {
  [anthropicServer, groqServer] = await Promise.all([startAnthropicServer(), startGroqServer()]);
  anthropic = createAnthropicModel({ apiKey: ANTHROPIC_KEY, baseURL: anthropicServer.url, defaultModel: "claude-test", timeoutMs: 2_000 });
  groq = createGroqModel({ apiKey: GROQ_KEY, baseURL: groqServer.url, timeoutMs: 2_000 });
  const closed = await startAnthropicServer();
  deadPort = closed.url;
  await closed.close();
});
afterAll(async () => {
  await Promise.all([anthropicServer.close(), groqServer.close()]);
});

const scenarios = (key: string): Array<[string, Behaviour, boolean]> => [
  ["401 echoing the key", { type: "error", status: 401, message: `invalid api key: ${key}` }, false],
  ["429 echoing the key", { type: "error", status: 429, message: `key ${key} is over quota`, retryAfter: "1" }, false],
  ["500 echoing the key", { type: "error", status: 500, message: `upstream rejected ${key}` }, true],
  ["in-stream error echoing the key", { type: "streamError", text: "a b", afterChunks: 1, errorType: "api_error", message: `bad ${key}` }, true],
  ["mid-stream disconnect", { type: "disconnect", text: "a b c", afterChunks: 1 }, true],
  ["hang until timeout", { type: "hang" }, false],
];

describe.each([
  ["anthropic", () => anthropic, () => anthropicServer, ANTHROPIC_KEY],
  ["groq", () => groq, () => groqServer, GROQ_KEY],
] as const)("%s errors never contain the API key", (_name, getModel, getServer, key) => {
  it.each(scenarios(key))("%s", async (_label, behaviour, streaming) => {
    getServer().reset().enqueue(behaviour);
    // Only the hang needs a short deadline; the others must not race it on a busy machine.
    const request = { messages: [{ role: "user" as const, content: "hi" }], timeoutMs: behaviour.type === "hang" ? 150 : 5_000 };
    const error = await failure(streaming ? getModel().stream(request).final : getModel().complete(request));
    const text = exposedText(error);
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(key);
    if (behaviour.type === "error" && behaviour.message?.includes(key)) expect(error.message).toContain("[redacted]");
  });
});

describe("key hygiene beyond single providers", () => {
  it("a connection refused error names no key", async () => {
    const model = createAnthropicModel({ apiKey: ANTHROPIC_KEY, baseURL: deadPort, defaultModel: "claude-test", timeoutMs: 1_000 });
    const error = await failure(model.complete({ messages: [{ role: "user", content: "hi" }] }));
    expect(error.kind).toBe("server");
    expect(exposedText(error)).not.toContain(ANTHROPIC_KEY);
  });

  it("a cascade's summary of retried failures names no key", async () => {
    anthropicServer.reset().otherwise({ type: "error", status: 500, message: `no ${ANTHROPIC_KEY}` });
    groqServer.reset().otherwise({ type: "error", status: 503, message: `no ${GROQ_KEY}` });
    const cascade = createCascade([withRetry(anthropic, { retries: 1, baseDelayMs: 1 }), withRetry(groq, { retries: 1, baseDelayMs: 1 })]);
    const error = await failure(cascade.complete({ messages: [{ role: "user", content: "hi" }] }));
    const text = exposedText(error);
    expect(text).toContain("anthropic");
    expect(text).toContain("groq");
    expect(text).not.toContain(ANTHROPIC_KEY);
    expect(text).not.toContain(GROQ_KEY);
  });

  it("a missing key error names the variable only", () => {
    const saved = process.env["GROQ_API_KEY"];
    delete process.env["GROQ_API_KEY"];
    try {
      expect(() => createGroqModel({ baseURL: groqServer.url })).toThrow(/GROQ_API_KEY/);
    } finally {
      if (saved !== undefined) process.env["GROQ_API_KEY"] = saved;
    }
  });
});
