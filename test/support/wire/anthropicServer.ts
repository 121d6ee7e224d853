/**
 * A local server speaking Anthropic's Messages API (`POST /v1/messages`): JSON replies, the
 * real SSE event sequence, and Anthropic's error bodies. Point the real `@anthropic-ai/sdk`
 * at `server.url`. A scripted reply's tool calls come back as `tool_use` blocks (JSON replies
 * only: the adapter fetches an answer to a request with tools whole).
 */
import { ScriptedServer, sseFrame, type ReplyPlan, type WireDialect } from "./scriptedServer.ts";

export type { Behaviour, RecordedRequest } from "./scriptedServer.ts";
export { ScriptedServer } from "./scriptedServer.ts";

/** The `error.type` Anthropic sends for each status. */
function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

const usageBlock = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
});

export const anthropicDialect: WireDialect = {
  path: "/v1/messages",

  json(plan: ReplyPlan) {
    return {
      id: `msg_${plan.id}`,
      type: "message",
      role: "assistant",
      model: plan.model,
      content: [
        // As the API does: a text block unless the answer is only tool calls.
        ...(plan.text || plan.toolCalls.length === 0 ? [{ type: "text", text: plan.text, citations: null }] : []),
        ...plan.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input, caller: { type: "direct" } })),
      ],
      stop_reason: plan.stopReason || (plan.toolCalls.length > 0 ? "tool_use" : "end_turn"),
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: usageBlock(plan.inputTokens, plan.outputTokens),
    };
  },

  prelude(plan: ReplyPlan) {
    return [
      sseFrame(
        {
          type: "message_start",
          message: {
            id: `msg_${plan.id}`,
            type: "message",
            role: "assistant",
            model: plan.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            // As the API does: input counted up front, output starts at 1 and grows.
            usage: usageBlock(plan.inputTokens, 1),
          },
        },
        "message_start",
      ),
      sseFrame({ type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } }, "content_block_start"),
      sseFrame({ type: "ping" }, "ping"),
    ];
  },

  chunk(text: string) {
    return sseFrame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta");
  },

  epilogue(plan: ReplyPlan) {
    return [
      sseFrame({ type: "content_block_stop", index: 0 }, "content_block_stop"),
      sseFrame(
        {
          type: "message_delta",
          delta: { stop_reason: plan.stopReason || "end_turn", stop_sequence: null },
          usage: { output_tokens: plan.outputTokens },
        },
        "message_delta",
      ),
      sseFrame({ type: "message_stop" }, "message_stop"),
    ];
  },

  streamError(errorType: string, message: string) {
    return sseFrame({ type: "error", error: { type: errorType, message } }, "error");
  },

  errorBody(status: number, message: string, errorType?: string) {
    return { type: "error", error: { type: errorType ?? anthropicErrorType(status), message } };
  },
};

export function startAnthropicServer(): Promise<ScriptedServer> {
  return ScriptedServer.start(anthropicDialect);
}
