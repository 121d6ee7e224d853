/**
 * An in-process model for unit tests of souls: answers from a queue, records every request,
 * streams an answer in a few chunks. No wire, no SDK: the integration tests do that part.
 */
import type { CognitionContext } from "../../../runtime/cognition/index.ts";
import {
  createCompletionStream,
  ModelRegistry,
  zeroUsage,
  type ChatMessage,
  type CompletionRequest,
  type LanguageModel,
} from "../../../runtime/providers/index.ts";

export interface QueueModel extends LanguageModel {
  readonly requests: CompletionRequest[];
  answer(...texts: string[]): void;
  left(): number;
}

export function queueModel(): QueueModel {
  const queue: string[] = [];
  const requests: CompletionRequest[] = [];
  const next = (request: CompletionRequest): string => {
    requests.push(request);
    const text = queue.shift();
    if (text === undefined) throw new Error(`queue model: no answer left (request ${requests.length})`);
    return text;
  };
  return {
    provider: "queue",
    requests,
    answer: (...texts) => void queue.push(...texts),
    left: () => queue.length,
    async complete(request) {
      return { text: next(request), usage: zeroUsage(), provider: "queue", model: request.model ?? "m" };
    },
    stream(request) {
      return createCompletionStream("queue", async (sink) => {
        const text = next(request);
        const third = Math.ceil(text.length / 3);
        for (let i = 0; i < text.length; i += third) sink.emit(text.slice(i, i + third));
        return { text, usage: zeroUsage(), provider: "queue", model: request.model ?? "m" };
      });
    },
  };
}

export function queueCognition(model: LanguageModel): CognitionContext {
  return { registry: new ModelRegistry().register("queue", model), defaultModel: "queue:m" };
}

/** All of a request's message texts, joined. */
export const requestText = (request: CompletionRequest): string => request.messages.map((m: ChatMessage) => m.content).join("\n\n");
