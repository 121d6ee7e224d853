/**
 * The contract every language-model provider implements. Cognitive steps, the cascade,
 * consensus and the soul runtime only ever see this interface, so a provider can be
 * swapped (or a wire-compatible local server used in tests) without touching callers.
 */

export type ChatRole = "system" | "user" | "assistant";

/**
 * A prompt message's role: the chat roles, plus `tool` for a tool's result. `tool` is not a
 * ChatRole because working memory never holds one: tool results enter memory fenced, as the
 * soul's notes, and only the `toolUse` step's own exchange with the model uses this role.
 */
export type MessageRole = ChatRole | "tool";

export interface ChatMessage {
  role: MessageRole;
  /** The text; on an assistant message with tool calls, the text that came with them (may be empty). */
  content: string;
  /** Speaker name. Providers that have no name field fold it into the content. */
  name?: string;
  /** On an assistant message: the tool calls the model made in it. */
  toolCalls?: readonly ToolCall[];
  /** On a `tool` message: the id of the call it answers. */
  toolCallId?: string;
  /** On a `tool` message: the call was refused or failed (the content says why). */
  isError?: boolean;
}

/**
 * A tool the model may call: the same shape as cognition's ToolSpec (ToolBox.ts), declared
 * here because providers sit below cognition and cannot import it.
 */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON schema of the tool's input (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** `auto`: the model decides; `required`: it must call some tool; `none`: it must not; or one named tool. */
export type ToolChoice = "auto" | "required" | "none" | { name: string };

/** One tool call the model made. `input` is the parsed arguments (JSON), unchecked against the schema. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/**
 * What the caller expects back. Real providers see it only through the prompt; the offline
 * model uses it to answer in the requested shape, so format-dependent code runs offline.
 */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json"; schema: Record<string, unknown> }
  | { type: "tags"; tags: readonly string[] };

export interface CompletionRequest {
  messages: readonly ChatMessage[];
  /** Model id inside the provider (the part after `provider:`). Providers have a default. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  /** Per-request deadline; exceeding it fails with a `timeout` ProviderError. */
  timeoutMs?: number;
  format?: ResponseFormat;
  /**
   * Tools the model may call natively (Anthropic `tool_use`, OpenAI-style `tool_calls`).
   * The SDK adapters answer a request with tools without streaming: `stream` hands out the
   * text as one chunk, and the calls arrive in `final.toolCalls`.
   */
  tools?: readonly ToolDefinition[];
  /** Only with `tools`; the provider's default (`auto`) when absent. */
  toolChoice?: ToolChoice;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface Completion {
  text: string;
  usage: Usage;
  provider: string;
  model: string;
  /** Normalised to `tool_use` when the model stopped to call tools (OpenAI's `tool_calls`). */
  stopReason?: string;
  /** The tool calls the model made, in order; absent when it made none. */
  toolCalls?: ToolCall[];
}

/** Text chunks as they arrive; `final` settles with the whole completion (or the failure). */
export interface CompletionStream extends AsyncIterable<string> {
  readonly final: Promise<Completion>;
}

export interface LanguageModel {
  /** Provider name, the part before `:` in a model name. */
  readonly provider: string;
  complete(request: CompletionRequest): Promise<Completion>;
  stream(request: CompletionRequest): CompletionStream;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}
