/**
 * The Groq provider: the real `groq-sdk` chat completions (OpenAI wire format) behind
 * `LanguageModel`. Same policy as the Anthropic adapter (sdkSettings.ts): SDK retries off,
 * our own deadline, every failure classified into a `ProviderError`.
 */
import Groq, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "groq-sdk";
import { createCompletionStream, streamWhole } from "./completionStream.ts";
import type { ChatMessage, Completion, CompletionRequest, CompletionStream, LanguageModel, ToolCall, Usage } from "./LanguageModel.ts";
import { ProviderError } from "./ProviderError.ts";
import { sdkSettings, underDeadline, type SdkModelOptions } from "./sdkSettings.ts";
import { estimateTokens } from "./usage.ts";

const PROVIDER = "groq";
export const GROQ_DEFAULT_MODEL = "llama-3.3-70b-versatile";

type GroqMessage = Groq.Chat.ChatCompletionMessageParam;
type GroqChunk = Groq.Chat.ChatCompletionChunk;
/** The OpenAI convention puts usage on the last chunk itself; Groq nests it in `x_groq`. Accept both. */
type ChunkWithUsage = GroqChunk & { usage?: Groq.CompletionUsage | null };

/** `apiKey` defaults to `GROQ_API_KEY`, `baseURL` to `GROQ_BASE_URL`; `maxTokens` is max_completion_tokens. */
export type GroqModelOptions = SdkModelOptions;

/** OpenAI-style chat has a `name` field, so names pass through instead of being folded. */
const API_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function toGroqMessages(messages: readonly ChatMessage[]): GroqMessage[] {
  return messages.map((m): GroqMessage => {
    // OpenAI-style APIs accept only `[A-Za-z0-9_-]{1,64}` as a name; anything else (a display
    // name with a space, an accent) is folded into the content rather than risking a 400.
    const apiName = m.name && API_NAME.test(m.name) ? m.name : undefined;
    const name = apiName ? { name: apiName } : {};
    if (m.name && !apiName) m = { ...m, content: `${m.name}: ${m.content}` };
    switch (m.role) {
      case "system":
        return { role: "system", content: m.content, ...name };
      case "user":
        return { role: "user", content: m.content, ...name };
      case "assistant":
        return assistantMessage(m, name);
      case "tool":
        // The format has no error flag, so a failed call says so in its text.
        return { role: "tool", tool_call_id: m.toolCallId ?? "", content: m.isError ? `Error: ${m.content}` : m.content };
    }
  });
}

function assistantMessage(m: ChatMessage, name: { name?: string }): GroqMessage {
  if (!m.toolCalls?.length) return { role: "assistant", content: m.content, ...name };
  return {
    role: "assistant",
    // A message that only calls tools has no content: null, as the API itself answers it.
    content: m.content || null,
    tool_calls: m.toolCalls.map((c) => ({
      id: c.id,
      type: "function" as const,
      function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
    })),
    ...name,
  };
}

/** Our tool definitions and choice in the OpenAI function-calling shape. */
function toolParams(request: CompletionRequest): { tools?: Groq.Chat.ChatCompletionTool[]; tool_choice?: Groq.Chat.ChatCompletionToolChoiceOption } {
  if (!request.tools?.length) return {};
  const tools = request.tools.map(
    (t): Groq.Chat.ChatCompletionTool => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }),
  );
  const choice = request.toolChoice;
  if (choice === undefined) return { tools };
  return { tools, tool_choice: typeof choice === "object" ? { type: "function", function: { name: choice.name } } : choice };
}

/**
 * The calls in an answer, their JSON arguments parsed. Arguments that are not JSON (models
 * do produce them) are passed on as the raw string, so the tool's input check refuses them
 * and the model is told why, instead of the whole answer failing here.
 */
function toolCallsOf(calls: readonly Groq.Chat.ChatCompletionMessageToolCall[] | undefined): ToolCall[] {
  return (calls ?? []).map((c) => {
    let input: unknown = c.function.arguments;
    try {
      input = c.function.arguments.trim() ? JSON.parse(c.function.arguments) : {};
    } catch {
      // Kept raw (see above).
    }
    return { id: c.id, name: c.function.name, input };
  });
}

/** OpenAI's `tool_calls` finish reason is Anthropic's `tool_use`: one name for "stopped to call tools". */
const stopReasonOf = (finish: string): string => (finish === "tool_calls" ? "tool_use" : finish);

function estimateUsage(messages: readonly ChatMessage[], text: string): Usage {
  return {
    inputTokens: estimateTokens(messages.map((m) => m.content).join("\n")),
    outputTokens: estimateTokens(text),
  };
}

export function createGroqModel(opts: GroqModelOptions = {}): LanguageModel {
  const settings = sdkSettings(
    {
      provider: PROVIDER,
      apiKeyEnv: "GROQ_API_KEY",
      baseUrlEnv: "GROQ_BASE_URL",
      defaultModel: GROQ_DEFAULT_MODEL,
      sdk: { APIError, APIUserAbortError, APIConnectionError, APIConnectionTimeoutError },
    },
    opts,
  );
  const client = new Groq(settings.client);

  const params = (request: CompletionRequest) => {
    if (request.messages.length === 0) {
      throw new ProviderError({ provider: PROVIDER, kind: "bad_request", message: "the request has no messages" });
    }
    return {
      model: request.model ?? settings.defaultModel,
      messages: toGroqMessages(request.messages),
      max_completion_tokens: request.maxTokens ?? settings.maxTokens,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...toolParams(request),
    };
  };

  const model: LanguageModel = {
    provider: PROVIDER,

    async complete(request: CompletionRequest): Promise<Completion> {
      const body = params(request);
      return underDeadline(settings, request, undefined, async (deadline) => {
        const completion = await client.chat.completions.create(
          { ...body, stream: false },
          { signal: deadline.signal, timeout: deadline.timeoutMs },
        );
        const choice = completion.choices[0];
        const text = choice?.message.content ?? "";
        const toolCalls = toolCallsOf(choice?.message.tool_calls);
        const usage = completion.usage
          ? { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens }
          : estimateUsage(request.messages, text);
        return {
          text,
          usage,
          provider: PROVIDER,
          model: completion.model || body.model,
          ...(choice?.finish_reason ? { stopReason: stopReasonOf(choice.finish_reason) } : {}),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
        };
      });
    },

    stream(request: CompletionRequest): CompletionStream {
      // With tools the answer is fetched whole (see streamWhole): a call's arguments stream as partial JSON.
      if (request.tools?.length) return streamWhole(PROVIDER, (r) => model.complete(r), request);
      return createCompletionStream(PROVIDER, async (sink) => {
        const body = params(request);
        return underDeadline(settings, request, sink.signal, async (deadline, opened) => {
          const chunks = await client.chat.completions.create(
            { ...body, stream: true },
            { signal: deadline.signal, timeout: deadline.timeoutMs },
          );
          opened();
          let text = "";
          let model = body.model;
          let stopReason: string | undefined;
          let usage: Usage | undefined;
          for await (const raw of chunks) {
            const chunk: ChunkWithUsage = raw;
            model = chunk.model || model;
            const choice = chunk.choices[0];
            const delta = choice?.delta.content;
            if (delta) {
              text += delta;
              sink.emit(delta);
            }
            if (choice?.finish_reason) stopReason = choice.finish_reason;
            const reported = chunk.x_groq?.usage ?? chunk.usage;
            if (reported) usage = { inputTokens: reported.prompt_tokens, outputTokens: reported.completion_tokens };
          }
          // The SDK ends the iteration quietly on abort and on a body that just stops; an
          // answer without finish_reason was cut off, not finished.
          if (deadline.cause()) throw new Error("request signal fired mid-stream");
          if (stopReason === undefined) {
            throw new ProviderError({ provider: PROVIDER, kind: "stream", message: "stream ended without a finish_reason" });
          }
          return {
            text,
            usage: usage ?? estimateUsage(request.messages, text),
            provider: PROVIDER,
            model,
            stopReason,
          };
        });
      });
    },
  };
  return model;
}
