/**
 * The Anthropic provider: the real `@anthropic-ai/sdk` Messages API behind `LanguageModel`.
 * Settings, SDK retries (off) and the request deadline are shared with the Groq adapter
 * (see sdkSettings.ts).
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import { createCompletionStream } from "./completionStream.ts";
import type {
  ChatMessage,
  Completion,
  CompletionRequest,
  CompletionStream,
  LanguageModel,
  Usage,
} from "./LanguageModel.ts";
import { ProviderError } from "./ProviderError.ts";
import { sdkSettings, underDeadline, type SdkModelOptions } from "./sdkSettings.ts";

const PROVIDER = "anthropic";
export const ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-5-5";

/** `apiKey` defaults to `ANTHROPIC_API_KEY`, `baseURL` to `ANTHROPIC_BASE_URL`; `maxTokens` is max_tokens. */
export type AnthropicModelOptions = SdkModelOptions;

interface AnthropicTurn {
  role: "user" | "assistant";
  content: string;
}

/**
 * Maps our chat messages onto the Messages API: system messages go to the `system` parameter
 * (wherever they appear), consecutive turns of one role are merged because the API wants
 * alternating roles, and `name` is folded into the text because the API has no name field.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): { system?: string; messages: AnthropicTurn[] } {
  const fold = (m: ChatMessage): string => (m.name ? `${m.name}: ${m.content}` : m.content);
  const system: string[] = [];
  const turns: AnthropicTurn[] = [];
  const push = (role: AnthropicTurn["role"], content: string) => {
    const last = turns.at(-1);
    if (last && last.role === role) last.content += `\n\n${content}`;
    else turns.push({ role, content });
  };
  // A cognitive step ends with its command as a system message. Folded into `system` it would
  // leave the soul's own last memory (say, a thought) as the final turn, which Anthropic treats
  // as a prefill to continue; sent as the closing user turn, it is the instruction to act on.
  const last = messages.at(-1);
  const command = last?.role === "system" && messages.some((m) => m.role !== "system") ? last : undefined;
  for (const m of messages) {
    if (m === command) continue;
    if (m.role === "system") system.push(fold(m));
    else push(m.role, fold(m));
  }
  if (command) push("user", fold(command));
  if (turns.length === 0 && system.length > 0) {
    // The API needs at least one turn; a system-only prompt is the whole instruction, so it becomes the turn.
    return { messages: [{ role: "user", content: system.join("\n\n") }] };
  }
  // The API rejects a conversation that opens with an assistant turn (a soul speaking first).
  if (turns[0]?.role === "assistant") turns.unshift({ role: "user", content: "(The conversation so far.)" });
  return system.length > 0 ? { system: system.join("\n\n"), messages: turns } : { messages: turns };
}

/** Input tokens include cache writes and reads: all of them are billed and rate-limited. */
function inputTokensOf(u: {
  input_tokens: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}): number {
  return (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

export function createAnthropicModel(opts: AnthropicModelOptions = {}): LanguageModel {
  const settings = sdkSettings(
    {
      provider: PROVIDER,
      apiKeyEnv: "ANTHROPIC_API_KEY",
      baseUrlEnv: "ANTHROPIC_BASE_URL",
      defaultModel: ANTHROPIC_DEFAULT_MODEL,
      sdk: { APIError, APIUserAbortError, APIConnectionError, APIConnectionTimeoutError },
    },
    opts,
  );
  const client = new Anthropic(settings.client);

  const params = (request: CompletionRequest) => {
    const { system, messages } = toAnthropicMessages(request.messages);
    if (messages.length === 0) {
      throw new ProviderError({ provider: PROVIDER, kind: "bad_request", message: "the request has no messages" });
    }
    // `temperature` is not sent: SDK 1.x (API version 2026-10-21) has no such parameter any more.
    return {
      model: request.model ?? settings.defaultModel,
      max_tokens: request.maxTokens ?? settings.maxTokens,
      messages,
      ...(system !== undefined ? { system } : {}),
    };
  };

  return {
    provider: PROVIDER,

    async complete(request: CompletionRequest): Promise<Completion> {
      const body = params(request);
      return underDeadline(settings, request, undefined, async (deadline) => {
        const message = await client.messages.create(
          { ...body, stream: false },
          { signal: deadline.signal, timeout: deadline.timeoutMs },
        );
        let text = "";
        for (const block of message.content) if (block.type === "text") text += block.text;
        return {
          text,
          usage: { inputTokens: inputTokensOf(message.usage), outputTokens: message.usage.output_tokens },
          provider: PROVIDER,
          model: message.model || body.model,
          ...(message.stop_reason ? { stopReason: message.stop_reason } : {}),
        };
      });
    },

    stream(request: CompletionRequest): CompletionStream {
      return createCompletionStream(PROVIDER, async (sink) => {
        const body = params(request);
        return underDeadline(settings, request, sink.signal, async (deadline, opened) => {
          const events = await client.messages.create(
            { ...body, stream: true },
            { signal: deadline.signal, timeout: deadline.timeoutMs },
          );
          opened();
          let text = "";
          let model = body.model;
          let stopReason: string | undefined;
          let finished = false;
          const usage: Usage = { inputTokens: 0, outputTokens: 0 };
          for await (const event of events) {
            switch (event.type) {
              case "message_start":
                usage.inputTokens = inputTokensOf(event.message.usage);
                usage.outputTokens = event.message.usage.output_tokens ?? 0;
                model = event.message.model || model;
                break;
              case "content_block_delta":
                if (event.delta.type === "text_delta") {
                  text += event.delta.text;
                  sink.emit(event.delta.text);
                }
                break;
              case "message_delta":
                // Both counts are cumulative; input appears here only when it changed (server tools).
                usage.outputTokens = event.usage.output_tokens;
                if (event.usage.input_tokens != null) usage.inputTokens = inputTokensOf(event.usage);
                stopReason = event.delta.stop_reason ?? stopReason;
                break;
              case "message_stop":
                finished = true;
                break;
              default:
                break;
            }
          }
          // The SDK ends the iteration quietly when its signal fires, so a deadline or abort
          // mid-stream would otherwise look like a short but complete answer.
          if (deadline.cause()) throw new Error("request signal fired mid-stream");
          if (!finished) {
            throw new ProviderError({ provider: PROVIDER, kind: "stream", message: "stream ended before message_stop" });
          }
          return { text, usage, provider: PROVIDER, model, ...(stopReason ? { stopReason } : {}) };
        });
      });
    },
  };
}
