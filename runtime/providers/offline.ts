/**
 * The offline model: the embedded default when no provider key is set.
 *
 * It is deterministic and local (no network, no key) and it follows the requested format, so
 * every format-dependent path (JSON schema steps, tagged single-call pipelines, streaming)
 * runs end to end without a provider. It never pretends to be a real model: what it says
 * states plainly that it is the offline model.
 *
 * Determinism: booleans and choices (a soul's `mentalQuery` and `decision`, an ISM's next
 * action, the mood it reports) follow documented rules about what the person said
 * (offlineJudgement.ts, offlineSignals.ts; README.md "The offline model's rules"); the rest
 * (verbs, phrasing, made-up JSON values) comes from a hash of the conversation. The same
 * request always gets the same answer. With tools, it calls the one the request names and then
 * answers from the result (offlineTools.ts).
 */
import { createCompletionStream, type StreamSink } from "./completionStream.ts";
import { sleep, startDeadline, type RequestDeadline } from "./deadline.ts";
import type {
  ChatMessage,
  Completion,
  CompletionRequest,
  CompletionStream,
  LanguageModel,
  ResponseFormat,
} from "./LanguageModel.ts";
import { offlineActionChoice } from "./offlineActionChoice.ts";
import { readConversation, type Conversation } from "./offlineConversation.ts";
import { dialogueLine, intuitionLine, MONOLOGUE_VERBS, summaryLine, thoughtLine } from "./offlineLines.ts";
import { valueFromSchema } from "./offlineSchemaValues.ts";
import { tagsAnswer } from "./offlineTags.ts";
import { offlineToolAnswer } from "./offlineTools.ts";
import { ProviderError } from "./ProviderError.ts";
import { estimateTokens } from "./usage.ts";

export const OFFLINE_PROVIDER = "offline";
export const OFFLINE_DEFAULT_MODEL = "echo";

export interface OfflineModelOptions {
  /** Delay before the answer starts, to exercise timeouts, cancellation and streaming UIs. Default 0. */
  latencyMs?: number;
  /** Model id reported when the request names none. Default `echo`. */
  name?: string;
}

export function createOfflineModel(opts: OfflineModelOptions = {}): LanguageModel {
  const latencyMs = Math.max(0, opts.latencyMs ?? 0);
  const defaultName = opts.name ?? OFFLINE_DEFAULT_MODEL;

  async function produce(request: CompletionRequest, sink?: StreamSink): Promise<Completion> {
    const deadline = startDeadline(request.timeoutMs ?? Number.POSITIVE_INFINITY, [request.signal, sink?.signal]);
    try {
      if (deadline.signal.aborted) throw failure(deadline);
      if (latencyMs > 0) {
        try {
          await sleep(latencyMs, deadline.signal);
        } catch {
          throw failure(deadline);
        }
      }
      const tooled = request.tools?.length ? offlineToolAnswer(request, readConversation(request.messages)) : undefined;
      const text = tooled?.text ?? composeOfflineAnswer(request.messages, request.format);
      if (sink) {
        for (const chunk of wordChunks(text)) {
          if (deadline.signal.aborted) throw failure(deadline);
          sink.emit(chunk);
          // Let the consumer (and an abort) in between chunks, as a network stream would.
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      if (deadline.signal.aborted) throw failure(deadline);
      return {
        text,
        usage: {
          inputTokens: estimateTokens(request.messages.map((m) => m.content).join("\n")),
          outputTokens: estimateTokens(text),
        },
        provider: OFFLINE_PROVIDER,
        model: request.model ?? defaultName,
        stopReason: tooled?.toolCalls ? "tool_use" : "end_turn",
        ...(tooled?.toolCalls ? { toolCalls: tooled.toolCalls } : {}),
      };
    } finally {
      deadline.dispose();
    }
  }

  return {
    provider: OFFLINE_PROVIDER,
    complete: (request) => produce(request),
    stream: (request): CompletionStream => createCompletionStream(OFFLINE_PROVIDER, (sink) => produce(request, sink)),
  };
}

function failure(deadline: RequestDeadline): ProviderError {
  if (deadline.cause() === "timeout") {
    return new ProviderError({
      provider: OFFLINE_PROVIDER,
      kind: "timeout",
      message: `no answer within ${deadline.timeoutMs} ms`,
    });
  }
  return new ProviderError({ provider: OFFLINE_PROVIDER, kind: "aborted", message: "request aborted" });
}

/** Splits text into word chunks whose concatenation is exactly the text. */
export function wordChunks(text: string): string[] {
  if (text.length === 0) return [];
  return text.match(/\s*\S+\s*/g) ?? [text];
}

// ---------------------------------------------------------------------------------------------
// Answers

/**
 * The offline model's whole answer for a conversation in a format. Exported so other
 * offline fakes (and tests) can reuse exactly what the model would say.
 */
export function composeOfflineAnswer(messages: readonly ChatMessage[], format?: ResponseFormat): string {
  const convo = readConversation(messages);
  switch (format?.type) {
    case "json":
      return offlineActionChoice(format.schema, convo.command, convo) ?? JSON.stringify(valueFromSchema(format.schema, format.schema, convo, "$", 0));
    case "tags":
      return tagsAnswer(format.tags, convo);
    default:
      return textAnswer(convo);
  }
}

/**
 * Plain text. When the instruction asks for Open Souls' `Name verb: "..."` format, the
 * offline model follows it, as a real model would, so the steps' stripping is exercised.
 */
function textAnswer(c: Conversation): string {
  const format = /Use the format:\s*'?([^\n'"]{1,80}?):\s*"\.\.\."/.exec(c.command);
  const verb = format?.[1].trim().split(/\s+/).at(-1)?.toLowerCase() ?? "";
  const wantsSummary = /\bsummar(?:y|ize|ise)/i.test(c.command) || verb === "summarized";
  // "Do not include internal thoughts" appears in dialogue instructions too, so only a request
  // *for* a monologue (or a monologue verb in the format) counts.
  const wantsThought =
    /next internal monologue|internal monologue thought/i.test(c.command) ||
    MONOLOGUE_VERBS.includes(verb) ||
    verb === "thinks" ||
    verb === "feels";
  const body =
    verb === "whispers" ? intuitionLine(c) : wantsSummary ? summaryLine(c) : wantsThought ? thoughtLine(c) : dialogueLine(c);
  return format ? `${format[1].trim()}: "${body}"` : body;
}
