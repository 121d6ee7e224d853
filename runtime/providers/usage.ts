/**
 * Token accounting. Souls have budgets and the benchmarks compare providers, and both need
 * the same numbers: usage summed per provider and model, whichever path produced it
 * (complete, stream, cascade, consensus).
 */
import { createCompletionStream, linkSignals, relay } from "./completionStream.ts";
import type { Completion, CompletionRequest, CompletionStream, LanguageModel, Usage } from "./LanguageModel.ts";

/**
 * A rough count for when a provider reports no usage. Four characters per token is the usual
 * rule of thumb for English BPE vocabularies; budgets need an order of magnitude, not exactness.
 */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

export interface UsageTotals extends Usage {
  calls: number;
}

export interface UsageEntry extends UsageTotals {
  provider: string;
  model: string;
}

export class UsageMeter {
  readonly #entries = new Map<string, UsageEntry>();

  record(provider: string, model: string, usage: Usage): void {
    // The provider name cannot contain ':' (it is the separator of model names), so the key is unambiguous.
    const key = `${provider}:${model}`;
    const entry = this.#entries.get(key) ?? { provider, model, inputTokens: 0, outputTokens: 0, calls: 0 };
    entry.inputTokens += usage.inputTokens;
    entry.outputTokens += usage.outputTokens;
    entry.calls += 1;
    this.#entries.set(key, entry);
  }

  recordCompletion(completion: Completion): void {
    this.record(completion.provider, completion.model, completion.usage);
  }

  /** Every provider/model pair seen, in first-seen order. Copies, so callers cannot skew the meter. */
  entries(): UsageEntry[] {
    return [...this.#entries.values()].map((e) => ({ ...e }));
  }

  /** Totals over everything, or over one provider, or one provider's model. */
  total(filter: { provider?: string; model?: string } = {}): UsageTotals {
    const sum: UsageTotals = { inputTokens: 0, outputTokens: 0, calls: 0 };
    for (const e of this.#entries.values()) {
      if (filter.provider !== undefined && e.provider !== filter.provider) continue;
      if (filter.model !== undefined && e.model !== filter.model) continue;
      sum.inputTokens += e.inputTokens;
      sum.outputTokens += e.outputTokens;
      sum.calls += e.calls;
    }
    return sum;
  }

  reset(): void {
    this.#entries.clear();
  }

  /**
   * A model that records every successful completion here. Wrapping the model (rather than
   * asking every caller to record) means nothing that goes through it escapes the budget.
   */
  wrap(model: LanguageModel): LanguageModel {
    const meter = this;
    return {
      provider: model.provider,
      async complete(request: CompletionRequest): Promise<Completion> {
        const completion = await model.complete(request);
        meter.recordCompletion(completion);
        return completion;
      },
      stream(request: CompletionRequest): CompletionStream {
        return createCompletionStream(model.provider, async (sink) => {
          const inner = model.stream({ ...request, signal: linkSignals(request.signal, sink.signal) });
          const completion = await relay(inner, sink);
          meter.recordCompletion(completion);
          return completion;
        });
      },
    };
  }
}
