/**
 * A model provider for the operations tests: answers every call with the same short text and
 * the same usage (10 tokens in, 5 out), records what it was asked, and fails when told to, so
 * metrics and budgets can be checked against exact numbers.
 */
import { createCompletionStream, ProviderError, type Completion, type CompletionRequest, type LanguageModel, type ProviderFailureKind } from "../../../runtime/providers/index.ts";

export interface CountingModel extends LanguageModel {
  /** Every request, in order (failed ones too). */
  readonly requests: CompletionRequest[];
  /** The model ids asked for, in order. */
  models(): string[];
  /** The next call fails with a ProviderError of this kind. */
  failNext(kind: ProviderFailureKind): void;
}

export const USAGE = { inputTokens: 10, outputTokens: 5 } as const;

export function countingModel(provider = "fake", text = "Fine, thank you."): CountingModel {
  const requests: CompletionRequest[] = [];
  let failing: ProviderFailureKind | undefined;
  const answer = (request: CompletionRequest): Completion => {
    requests.push(request);
    if (failing !== undefined) {
      const kind = failing;
      failing = undefined;
      throw new ProviderError({ provider, kind, message: `scripted ${kind}` });
    }
    return { text, usage: { ...USAGE }, provider, model: request.model ?? "default" };
  };
  return {
    provider,
    requests,
    models: () => requests.map((r) => r.model ?? "default"),
    failNext: (kind) => void (failing = kind),
    complete: async (request) => answer(request),
    stream: (request) =>
      createCompletionStream(provider, async (sink) => {
        const completion = answer(request);
        sink.emit(completion.text);
        return completion;
      }),
  };
}
