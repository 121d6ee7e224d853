/**
 * The contract every language-model provider implements. Cognitive steps, the cascade,
 * consensus and the soul runtime only ever see this interface, so a provider can be
 * swapped (or a wire-compatible local server used in tests) without touching callers.
 */

export type ChatRole = "system" | "user" | "assistant";

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** Speaker name. Providers that have no name field fold it into the content. */
  name?: string;
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
  stopReason?: string;
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
