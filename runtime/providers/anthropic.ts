/**
 * The Anthropic provider: the real `@anthropic-ai/sdk` Messages API behind `LanguageModel`.
 * Settings, SDK retries (off) and the request deadline are shared with the Groq adapter
 * (see sdkSettings.ts).
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import { createCompletionStream, streamWhole } from "./completionStream.ts";
import type {
  ChatMessage,
  Completion,
  CompletionRequest,
  CompletionStream,
  LanguageModel,
  ToolCall,
  Usage,
} from "./LanguageModel.ts";
import { ProviderError } from "./ProviderError.ts";
import { sdkSettings, underDeadline, type SdkModelOptions } from "./sdkSettings.ts";

const PROVIDER = "anthropic";
export const ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-5-5";

/** `apiKey` defaults to `ANTHROPIC_API_KEY`, `baseURL` to `ANTHROPIC_BASE_URL`; `maxTokens` is max_tokens. */
export type AnthropicModelOptions = SdkModelOptions;

type ContentBlock = Anthropic.ContentBlockParam;

interface AnthropicTurn {
  role: "user" | "assistant";
  /** A string while the turn is plain text; blocks once it carries tool calls or results. */
  content: string | ContentBlock[];
}

const asBlocks = (content: string | ContentBlock[]): ContentBlock[] =>
  typeof content === "string" ? (content ? [{ type: "text", text: content }] : []) : content;

/** A tool loop's own messages: the model's tool calls and the results sent back. */
const isToolExchange = (m: ChatMessage): boolean => m.role === "tool" || (m.role === "assistant" && (m.toolCalls?.length ?? 0) > 0);

/**
 * The step's command: the last system message when only the tool loop's exchange follows it
 * and the prompt holds more than system messages.
 */
function commandOf(messages: readonly ChatMessage[]): ChatMessage | undefined {
  let i = messages.length - 1;
  while (i >= 0 && isToolExchange(messages[i]!)) i--;
  const candidate = messages[i];
  return candidate?.role === "system" && messages.some((m) => m.role !== "system") ? candidate : undefined;
}

/** One message as the turn it becomes: tool calls as `tool_use` blocks, a result as a user `tool_result` block. */
function turnOf(m: ChatMessage, fold: (m: ChatMessage) => string): AnthropicTurn {
  if (m.role === "tool") {
    const result: Anthropic.ToolResultBlockParam = {
      type: "tool_result",
      tool_use_id: m.toolCallId ?? "",
      content: m.content,
      is_error: m.isError === true,
    };
    return { role: "user", content: [result] };
  }
  const role = m.role === "assistant" ? "assistant" : "user";
  if (!m.toolCalls?.length) return { role, content: fold(m) };
  const calls = m.toolCalls.map((c): ContentBlock => ({ type: "tool_use", id: c.id, name: c.name, input: c.input ?? {} }));
  // The API rejects an empty text block, so a call without words is just its tool_use blocks.
  return { role, content: [...asBlocks(m.content ? fold(m) : ""), ...calls] };
}

/**
 * Maps our chat messages onto the Messages API: system messages go to the `system` parameter
 * (wherever they appear), consecutive turns of one role are merged because the API wants
 * alternating roles, and `name` is folded into the text because the API has no name field.
 * Tool calls become `tool_use` blocks of the assistant turn, and tool results `tool_result`
 * blocks of the user turn after it (consecutive results share that one turn, as the API wants).
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): { system?: string; messages: AnthropicTurn[] } {
  const fold = (m: ChatMessage): string => (m.name ? `${m.name}: ${m.content}` : m.content);
  const system: string[] = [];
  const turns: AnthropicTurn[] = [];
  const push = (turn: AnthropicTurn) => {
    const last = turns.at(-1);
    if (!last || last.role !== turn.role) turns.push(turn);
    else if (typeof last.content === "string" && typeof turn.content === "string") last.content += `\n\n${turn.content}`;
    else last.content = [...asBlocks(last.content), ...asBlocks(turn.content)];
  };
  // A cognitive step ends with its command as a system message. Folded into `system` it would
  // leave the soul's own last memory (say, a thought) as the final turn, which Anthropic treats
  // as a prefill to continue; sent as a user turn, it is the instruction to act on. In a tool
  // loop it keeps its place before the exchange, so every round sends the same prefix.
  const command = commandOf(messages);
  for (const m of messages) {
    if (m === command) push({ role: "user", content: fold(m) });
    else if (m.role === "system") system.push(fold(m));
    else push(turnOf(m, fold));
  }
  if (turns.length === 0 && system.length > 0) {
    // The API needs at least one turn; a system-only prompt is the whole instruction, so it becomes the turn.
    return { messages: [{ role: "user", content: system.join("\n\n") }] };
  }
  // The API rejects a conversation that opens with an assistant turn (a soul speaking first).
  if (turns[0]?.role === "assistant") turns.unshift({ role: "user", content: "(The conversation so far.)" });
  return system.length > 0 ? { system: system.join("\n\n"), messages: turns } : { messages: turns };
}

/** Our tool definitions and choice in the Messages API's shape. */
function toolParams(request: CompletionRequest): { tools?: Anthropic.Tool[]; tool_choice?: Anthropic.ToolChoice } {
  if (!request.tools?.length) return {};
  const tools = request.tools.map(
    (t): Anthropic.Tool => ({
      name: t.name,
      description: t.description,
      // The API requires an object schema; a schema that leaves `type` out means one.
      input_schema: { type: "object", ...t.inputSchema } as Anthropic.Tool.InputSchema,
    }),
  );
  const choice = request.toolChoice;
  if (choice === undefined) return { tools };
  const tool_choice: Anthropic.ToolChoice =
    typeof choice === "object" ? { type: "tool", name: choice.name } : choice === "required" ? { type: "any" } : { type: choice };
  return { tools, tool_choice };
}

/** The `tool_use` blocks of an answer, in order. */
function toolCallsOf(content: readonly Anthropic.ContentBlock[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of content) if (block.type === "tool_use") calls.push({ id: block.id, name: block.name, input: block.input });
  return calls;
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
      ...toolParams(request),
    };
  };

  const model: LanguageModel = {
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
        const toolCalls = toolCallsOf(message.content);
        return {
          text,
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          usage: { inputTokens: inputTokensOf(message.usage), outputTokens: message.usage.output_tokens },
          provider: PROVIDER,
          model: message.model || body.model,
          ...(message.stop_reason ? { stopReason: message.stop_reason } : {}),
        };
      });
    },

    stream(request: CompletionRequest): CompletionStream {
      // With tools the answer is fetched whole (see streamWhole): a tool_use block streams as partial JSON.
      if (request.tools?.length) return streamWhole(PROVIDER, (r) => model.complete(r), request);
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
  return model;
}
