/**
 * A local server speaking Groq's OpenAI-compatible chat completions at
 * `POST /openai/v1/chat/completions` (the path groq-sdk appends to its base URL):
 * `chat.completion` JSON, `chat.completion.chunk` SSE with `x_groq.usage` on the last chunk
 * and `data: [DONE]`, and OpenAI-style error bodies. Point the real `groq-sdk` at `server.url`.
 * A scripted reply's tool calls come back as `message.tool_calls` (JSON replies only: the
 * adapter fetches an answer to a request with tools whole).
 */
import { ScriptedServer, sseFrame, type ReplyPlan, type WireDialect } from "./scriptedServer.ts";

export type { Behaviour, RecordedRequest } from "./scriptedServer.ts";
export { ScriptedServer } from "./scriptedServer.ts";

function openAiErrorType(status: number): string {
  if (status === 401) return "invalid_api_key";
  if (status === 403) return "permission_denied";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "internal_server_error";
  return "invalid_request_error";
}

const CREATED = 1_760_000_000;

function chunkOf(plan: ReplyPlan, delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) {
  return {
    id: `chatcmpl-${plan.id}`,
    object: "chat.completion.chunk",
    created: CREATED,
    model: plan.model,
    system_fingerprint: "fp_local",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...extra,
  };
}

/** The answer's message: `tool_calls` with JSON-string arguments, and null content when it only calls tools (as the API sends). */
function messageOf(plan: ReplyPlan) {
  if (plan.toolCalls.length === 0) return { role: "assistant", content: plan.text };
  return {
    role: "assistant",
    content: plan.text || null,
    tool_calls: plan.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.input) },
    })),
  };
}

const usageOf = (plan: ReplyPlan) => ({
  prompt_tokens: plan.inputTokens,
  completion_tokens: plan.outputTokens,
  total_tokens: plan.inputTokens + plan.outputTokens,
});

export const groqDialect: WireDialect = {
  path: "/openai/v1/chat/completions",

  json(plan: ReplyPlan) {
    return {
      id: `chatcmpl-${plan.id}`,
      object: "chat.completion",
      created: CREATED,
      model: plan.model,
      choices: [{ index: 0, message: messageOf(plan), logprobs: null, finish_reason: plan.stopReason || (plan.toolCalls.length > 0 ? "tool_calls" : "stop") }],
      ...(plan.includeUsage ? { usage: usageOf(plan) } : {}),
      system_fingerprint: "fp_local",
      x_groq: { id: `req_${plan.id}` },
    };
  },

  prelude(plan: ReplyPlan) {
    return [sseFrame(chunkOf(plan, { role: "assistant", content: "" }, null, { x_groq: { id: `req_${plan.id}` } }))];
  },

  chunk(text: string, _index: number, plan: ReplyPlan) {
    return sseFrame(chunkOf(plan, { content: text }, null));
  },

  epilogue(plan: ReplyPlan) {
    const xGroq = plan.includeUsage ? { id: `req_${plan.id}`, usage: usageOf(plan) } : { id: `req_${plan.id}` };
    return [sseFrame(chunkOf(plan, {}, plan.stopReason || "stop", { x_groq: xGroq })), sseFrame("[DONE]")];
  },

  streamError(errorType: string, message: string) {
    return sseFrame({ error: { message, type: errorType } });
  },

  errorBody(status: number, message: string, errorType?: string) {
    return { error: { message, type: errorType ?? openAiErrorType(status), code: errorType ?? openAiErrorType(status) } };
  },
};

export function startGroqServer(): Promise<ScriptedServer> {
  return ScriptedServer.start(groqDialect);
}
