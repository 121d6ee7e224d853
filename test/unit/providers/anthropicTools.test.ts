/**
 * Native tool use through the real `@anthropic-ai/sdk` against the local Messages API server:
 * what the adapter sends (tools, tool choice, `tool_use` and `tool_result` blocks) and how it
 * reads `tool_use` blocks back.
 */
import { describe, expect, it } from "vitest";
import { createAnthropicModel, toAnthropicMessages } from "../../../runtime/providers/anthropic.ts";
import type { ChatMessage, ToolDefinition } from "../../../runtime/providers/index.ts";
import { createCascade } from "../../../runtime/providers/cascade.ts";
import { withRetry } from "../../../runtime/providers/retry.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { modelOverWire } from "../../support/wire/providerFixture.ts";

const wire = modelOverWire(startAnthropicServer, (baseURL) =>
  createAnthropicModel({ apiKey: "sk-ant-test", baseURL, defaultModel: "claude-test-1", timeoutMs: 5_000 }),
);

const CLOCK: ToolDefinition = {
  name: "clock",
  description: "The current time in a time zone.",
  inputSchema: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
};
const NOTES: ToolDefinition = {
  name: "search_notes",
  description: "Searches the soul's notes.",
  inputSchema: { properties: { query: { type: "string" } } },
};

/** A tool loop's second round: the instruction, the model's calls, and their results. */
const ROUND_TWO: ChatMessage[] = [
  { role: "system", content: "You are Ada." },
  { role: "user", content: "What time is it in Paris?" },
  { role: "system", content: "Use a tool if it helps, then answer." },
  {
    role: "assistant",
    content: "Let me look.",
    toolCalls: [
      { id: "toolu_1", name: "clock", input: { zone: "Europe/Paris" } },
      { id: "toolu_2", name: "search_notes", input: { query: "Paris" } },
    ],
  },
  { role: "tool", toolCallId: "toolu_1", content: "14:05" },
  { role: "tool", toolCallId: "toolu_2", content: "refused by gate: notes are private", isError: true },
];

describe("anthropic native tool use over the real SDK", () => {
  it("sends the tools with their input schemas and the tool choice", async () => {
    wire.server.enqueue({ type: "reply", text: "It is noon." });
    await wire.model.complete({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK, NOTES], toolChoice: { name: "clock" } });
    const body = wire.server.requests[0]!.body!;
    expect(body["tools"]).toEqual([
      { name: "clock", description: CLOCK.description, input_schema: CLOCK.inputSchema },
      // A schema without `type` is sent as the object schema the API requires.
      { name: "search_notes", description: NOTES.description, input_schema: { type: "object", properties: { query: { type: "string" } } } },
    ]);
    expect(body["tool_choice"]).toEqual({ type: "tool", name: "clock" });
  });

  it.each([
    ["auto", { type: "auto" }],
    ["required", { type: "any" }],
    ["none", { type: "none" }],
  ] as const)("maps toolChoice %s to %j", async (choice, sent) => {
    wire.server.enqueue({ type: "reply", text: "ok" });
    await wire.model.complete({ messages: [{ role: "user", content: "hi" }], tools: [CLOCK], toolChoice: choice });
    expect(wire.server.requests[0]!.body!["tool_choice"]).toEqual(sent);
  });

  it("sends no tools field when the request has none", async () => {
    wire.server.enqueue({ type: "reply", text: "ok" });
    await wire.model.complete({ messages: [{ role: "user", content: "hi" }] });
    expect(wire.server.requests[0]!.body).not.toHaveProperty("tools");
    expect(wire.server.requests[0]!.body).not.toHaveProperty("tool_choice");
  });

  it("reads tool_use blocks as tool calls, in order, with the text beside them", async () => {
    wire.server.enqueue({
      type: "reply",
      text: "Checking two things.",
      toolCalls: [
        { id: "toolu_a", name: "clock", input: { zone: "UTC" } },
        { id: "toolu_b", name: "search_notes", input: { query: "lunch" } },
      ],
      usage: { inputTokens: 30, outputTokens: 12 },
    });
    const completion = await wire.model.complete({ messages: [{ role: "user", content: "time and lunch?" }], tools: [CLOCK, NOTES] });
    expect(completion).toMatchObject({
      text: "Checking two things.",
      stopReason: "tool_use",
      usage: { inputTokens: 30, outputTokens: 12 },
      toolCalls: [
        { id: "toolu_a", name: "clock", input: { zone: "UTC" } },
        { id: "toolu_b", name: "search_notes", input: { query: "lunch" } },
      ],
    });
  });

  it("leaves toolCalls out of an answer that makes none", async () => {
    wire.server.enqueue({ type: "reply", text: "Just words." });
    const completion = await wire.model.complete({ messages: [{ role: "user", content: "hi" }], tools: [CLOCK] });
    expect(completion.toolCalls).toBeUndefined();
    expect(completion.stopReason).toBe("end_turn");
  });

  it("sends calls as tool_use blocks and results as tool_result blocks in one user turn after them", async () => {
    wire.server.enqueue({ type: "reply", text: "It is 14:05 in Paris." });
    const completion = await wire.model.complete({ messages: ROUND_TWO, tools: [CLOCK, NOTES] });
    expect(completion.text).toBe("It is 14:05 in Paris.");
    const body = wire.server.requests[0]!.body!;
    expect(body["system"]).toBe("You are Ada.");
    expect(body["messages"]).toEqual([
      // The instruction keeps its place before the exchange, every round.
      { role: "user", content: "What time is it in Paris?\n\nUse a tool if it helps, then answer." },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "toolu_1", name: "clock", input: { zone: "Europe/Paris" } },
          { type: "tool_use", id: "toolu_2", name: "search_notes", input: { query: "Paris" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "14:05", is_error: false },
          { type: "tool_result", tool_use_id: "toolu_2", content: "refused by gate: notes are private", is_error: true },
        ],
      },
    ]);
  });

  it("answers a streamed request with tools whole: the text as one chunk, the calls in final", async () => {
    wire.server.enqueue({ type: "reply", text: "One moment.", toolCalls: [{ id: "toolu_s", name: "clock", input: { zone: "UTC" } }] });
    const stream = wire.model.stream({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK] });
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.final;
    expect(chunks).toEqual(["One moment."]);
    expect(final.toolCalls).toEqual([{ id: "toolu_s", name: "clock", input: { zone: "UTC" } }]);
    expect(wire.server.requests[0]!.body!["stream"]).toBe(false);
  });

  it("passes tools through retry and the cascade", async () => {
    wire.server.enqueue(
      { type: "error", status: 529 },
      { type: "reply", text: "", toolCalls: [{ id: "toolu_r", name: "clock", input: { zone: "UTC" } }] },
    );
    const model = createCascade([withRetry(wire.model, { retries: 1, sleep: async () => undefined })]);
    const completion = await model.complete({ messages: [{ role: "user", content: "time?" }], tools: [CLOCK], toolChoice: "required" });
    expect(completion.toolCalls).toEqual([{ id: "toolu_r", name: "clock", input: { zone: "UTC" } }]);
    expect(wire.server.requests).toHaveLength(2);
    for (const req of wire.server.requests) {
      expect(req.body!["tools"]).toHaveLength(1);
      expect(req.body!["tool_choice"]).toEqual({ type: "any" });
    }
  });
});

describe("toAnthropicMessages with tools", () => {
  it("sends a call without words as tool_use blocks only", () => {
    const out = toAnthropicMessages([
      { role: "user", content: "time?" },
      { role: "assistant", content: "", toolCalls: [{ id: "t1", name: "clock", input: {} }] },
      { role: "tool", toolCallId: "t1", content: "noon" },
    ]);
    expect(out.messages[1]).toEqual({ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "clock", input: {} }] });
    expect(out.messages[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "noon", is_error: false }] });
  });
});
