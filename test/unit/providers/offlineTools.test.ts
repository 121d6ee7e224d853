/**
 * The offline model's native tool use (offlineTools.ts): it calls the tool the request names,
 * builds the input from the schema and the message, answers from results, and is deterministic.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage, CompletionRequest, ToolDefinition } from "../../../runtime/providers/LanguageModel.ts";
import { createOfflineModel } from "../../../runtime/providers/offline.ts";

const NOTES: ToolDefinition = {
  name: "search_notes",
  description: "Searches notes.",
  inputSchema: { type: "object", properties: { query: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 5 } }, required: ["query"] },
};
const CLOCK: ToolDefinition = {
  name: "clock",
  description: "The time in a zone.",
  inputSchema: { type: "object", properties: { zone: { type: "string", enum: ["UTC", "Europe/Paris"] } } },
};
const TOOLS = [NOTES, CLOCK];

const model = createOfflineModel();
const ask = (said: string, extra: Partial<CompletionRequest> = {}) =>
  model.complete({ messages: [{ role: "user", content: said }, { role: "system", content: "Help them." }], tools: TOOLS, ...extra });

describe("offline model tool use", () => {
  it("calls the tool the last user message names, the message as its query and the rest from the schema", async () => {
    const c = await ask("can you search notes about the picnic?");
    expect(c.stopReason).toBe("tool_use");
    expect(c.toolCalls).toHaveLength(1);
    const call = c.toolCalls![0]!;
    expect(call.name).toBe("search_notes");
    expect(call.input).toMatchObject({ query: "can you search notes about the picnic?" });
    const limit = (call.input as { limit: number }).limit;
    expect(limit).toBeGreaterThanOrEqual(1);
    expect(limit).toBeLessThanOrEqual(5);
    expect(call.id).toMatch(/^offline_[0-9a-f]{8}$/);
  });

  it("is deterministic: the same request makes the same call", async () => {
    const [a, b] = await Promise.all([ask("what does the clock say?"), ask("what does the clock say?")]);
    expect(a.toolCalls).toEqual(b.toolCalls);
    expect(a.toolCalls![0]!.name).toBe("clock");
    expect(["UTC", "Europe/Paris"]).toContain((a.toolCalls![0]!.input as { zone: string }).zone);
  });

  it("makes no call when no tool is named, and answers as without tools", async () => {
    const c = await ask("hello there");
    expect(c.toolCalls).toBeUndefined();
    expect(c.stopReason).toBe("end_turn");
    expect(c.text.length).toBeGreaterThan(0);
  });

  it("calls the first tool under `required`, the named one under a named choice, none under `none`", async () => {
    expect((await ask("hello", { toolChoice: "required" })).toolCalls?.[0]?.name).toBe("search_notes");
    expect((await ask("hello", { toolChoice: { name: "clock" } })).toolCalls?.[0]?.name).toBe("clock");
    expect((await ask("check the clock", { toolChoice: "none" })).toolCalls).toBeUndefined();
  });

  it("finds a tool the instruction names when the message names none", async () => {
    const c = await model.complete({ messages: [{ role: "user", content: "hi" }, { role: "system", content: "Use the clock." }], tools: TOOLS });
    expect(c.toolCalls?.[0]?.name).toBe("clock");
  });

  it("answers from the results after them, and says so when a call was refused", async () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "search notes and the clock" },
      { role: "system", content: "Help them." },
      { role: "assistant", content: "", toolCalls: [{ id: "a", name: "search_notes", input: {} }, { id: "b", name: "clock", input: {} }] },
      { role: "tool", toolCallId: "a", content: "Result (UNTRUSTED):\n\n```\npicnic on Sunday\n```" },
      { role: "tool", toolCallId: "b", content: "gate: the clock is off limits", isError: true },
    ];
    const c = await model.complete({ messages, tools: TOOLS });
    expect(c.toolCalls).toBeUndefined();
    expect(c.text).toBe("(offline model) search_notes says: picnic on Sunday I could not use clock: gate: the clock is off limits");
  });

  it("hands the calls to a streaming caller in final", async () => {
    const stream = model.stream({ messages: [{ role: "user", content: "clock please" }], tools: TOOLS });
    for await (const _ of stream) {
      // The text of a call-only answer is empty.
    }
    expect((await stream.final).toolCalls?.[0]?.name).toBe("clock");
  });
});
