/**
 * Native tool use (OpenAI function calling) through the real `groq-sdk` against the local
 * chat-completions server: what the adapter sends (tools, tool choice, assistant `tool_calls`
 * and `tool` messages) and how it reads `tool_calls` back.
 */
import { describe, expect, it } from "vitest";
import { createGroqModel, toGroqMessages } from "../../../runtime/providers/groq.ts";
import type { ChatMessage, ToolDefinition } from "../../../runtime/providers/index.ts";
import { createCascade } from "../../../runtime/providers/cascade.ts";
import { withRetry } from "../../../runtime/providers/retry.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import { modelOverWire } from "../../support/wire/providerFixture.ts";

const wire = modelOverWire(startGroqServer, (baseURL) =>
  createGroqModel({ apiKey: "gsk_test", baseURL, defaultModel: "llama-test", timeoutMs: 5_000 }),
);

const CLOCK: ToolDefinition = {
  name: "clock",
  description: "The current time in a time zone.",
  inputSchema: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
};

const ROUND_TWO: ChatMessage[] = [
  { role: "system", content: "You are Ada." },
  { role: "user", content: "What time is it in Paris?" },
  { role: "system", content: "Use a tool if it helps, then answer." },
  { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "clock", input: { zone: "Europe/Paris" } }] },
  { role: "tool", toolCallId: "call_1", content: "14:05" },
  { role: "assistant", content: "Checking again.", toolCalls: [{ id: "call_2", name: "clock", input: { zone: "Mars" } }] },
  { role: "tool", toolCallId: "call_2", content: "refused by gate: no such zone", isError: true },
];

describe("groq native tool use over the real SDK", () => {
  it("sends the tools as functions with their parameters, and the tool choice", async () => {
    wire.server.enqueue({ type: "reply", text: "noon" });
    await wire.model.complete({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK], toolChoice: { name: "clock" } });
    const body = wire.server.requests[0]!.body!;
    expect(body["tools"]).toEqual([{ type: "function", function: { name: "clock", description: CLOCK.description, parameters: CLOCK.inputSchema } }]);
    expect(body["tool_choice"]).toEqual({ type: "function", function: { name: "clock" } });
  });

  it.each(["auto", "required", "none"] as const)("sends toolChoice %s as is", async (choice) => {
    wire.server.enqueue({ type: "reply", text: "ok" });
    await wire.model.complete({ messages: [{ role: "user", content: "hi" }], tools: [CLOCK], toolChoice: choice });
    expect(wire.server.requests[0]!.body!["tool_choice"]).toBe(choice);
  });

  it("sends no tools field when the request has none", async () => {
    wire.server.enqueue({ type: "reply", text: "ok" });
    await wire.model.complete({ messages: [{ role: "user", content: "hi" }] });
    expect(wire.server.requests[0]!.body).not.toHaveProperty("tools");
  });

  it("reads tool_calls, parsing their JSON arguments, and reports stopReason tool_use", async () => {
    wire.server.enqueue({
      type: "reply",
      text: "",
      toolCalls: [
        { id: "call_a", name: "clock", input: { zone: "UTC" } },
        { id: "call_b", name: "clock", input: { zone: "Asia/Tokyo" } },
      ],
      usage: { inputTokens: 20, outputTokens: 9 },
    });
    const completion = await wire.model.complete({ messages: [{ role: "user", content: "times?" }], tools: [CLOCK] });
    expect(completion).toMatchObject({
      text: "",
      stopReason: "tool_use",
      usage: { inputTokens: 20, outputTokens: 9 },
      toolCalls: [
        { id: "call_a", name: "clock", input: { zone: "UTC" } },
        { id: "call_b", name: "clock", input: { zone: "Asia/Tokyo" } },
      ],
    });
  });

  it("passes arguments that are not JSON on as the raw string, for the tool's input check to refuse", async () => {
    wire.server.enqueue({ type: "reply", text: "", toolCalls: [{ id: "call_x", name: "clock", input: null, rawArguments: "{zone: UTC" }] });
    const completion = await wire.model.complete({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK] });
    expect(completion.toolCalls).toEqual([{ id: "call_x", name: "clock", input: "{zone: UTC" }]);
  });

  it("sends calls as assistant tool_calls and results as tool messages", async () => {
    wire.server.enqueue({ type: "reply", text: "It is 14:05 in Paris." });
    await wire.model.complete({ messages: ROUND_TWO, tools: [CLOCK] });
    expect(wire.server.requests[0]!.body!["messages"]).toEqual([
      { role: "system", content: "You are Ada." },
      { role: "user", content: "What time is it in Paris?" },
      { role: "system", content: "Use a tool if it helps, then answer." },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "clock", arguments: '{"zone":"Europe/Paris"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "14:05" },
      {
        role: "assistant",
        content: "Checking again.",
        tool_calls: [{ id: "call_2", type: "function", function: { name: "clock", arguments: '{"zone":"Mars"}' } }],
      },
      // The format has no error flag: a refused call says so in its text.
      { role: "tool", tool_call_id: "call_2", content: "Error: refused by gate: no such zone" },
    ]);
  });

  it("answers a streamed request with tools whole", async () => {
    wire.server.enqueue({ type: "reply", text: "", toolCalls: [{ id: "call_s", name: "clock", input: { zone: "UTC" } }] });
    const stream = wire.model.stream({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK] });
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.final;
    expect(chunks).toEqual([]);
    expect(final.toolCalls).toEqual([{ id: "call_s", name: "clock", input: { zone: "UTC" } }]);
    expect(wire.server.requests[0]!.body!["stream"]).toBe(false);
  });

  it("passes tools through retry and the cascade", async () => {
    wire.server.enqueue({ type: "error", status: 503 }, { type: "reply", text: "", toolCalls: [{ id: "call_r", name: "clock", input: {} }] });
    const model = createCascade([withRetry(wire.model, { retries: 1, sleep: async () => undefined })]);
    const completion = await model.complete({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK] });
    expect(completion.toolCalls).toEqual([{ id: "call_r", name: "clock", input: {} }]);
    expect(wire.server.requests.map((r) => (r.body!["tools"] as unknown[]).length)).toEqual([1, 1]);
  });
});

describe("toGroqMessages with tools", () => {
  it("keeps an API-safe name on an assistant message that calls tools", () => {
    const [out] = toGroqMessages([{ role: "assistant", name: "Ada", content: "", toolCalls: [{ id: "c", name: "clock", input: undefined }] }]);
    expect(out).toEqual({
      role: "assistant",
      name: "Ada",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "clock", arguments: "{}" } }],
    });
  });
});
