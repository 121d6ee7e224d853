/**
 * The node's models, watched: every call a soul, its ISM or a daimon makes through the node's
 * model registry is reported (provider, model, duration, tokens, or the failure) without the
 * providers knowing. It is a registry that hands out wrapped models, so a provider registered
 * later (a test adding one) is watched too, and `instanceof ModelRegistry` still holds.
 */
import {
  createCompletionStream,
  isProviderError,
  ModelRegistry,
  type Completion,
  type CompletionRequest,
  type CompletionStream,
  type LanguageModel,
  type ModelSelectionContext,
  type ModelSelector,
  type ResolvedModel,
  type Usage,
} from "../providers/index.ts";

export interface ModelCall {
  provider: string;
  /** The model id asked for (`default` when the request named none). */
  model: string;
  durationMs: number;
  /** Set when the call succeeded. */
  usage?: Usage;
  /** Set when it failed: the provider's failure kind (`rate_limit`, `timeout`, ...), or `error`. */
  failure?: string;
}

export type ModelCallObserver = (call: ModelCall) => void;

export function observeModels(inner: ModelRegistry, observe: ModelCallObserver): ModelRegistry {
  return new ObservedRegistry(inner, observe);
}

class ObservedRegistry extends ModelRegistry {
  readonly #inner: ModelRegistry;
  readonly #observe: ModelCallObserver;
  readonly #wrapped = new WeakMap<LanguageModel, LanguageModel>();

  constructor(inner: ModelRegistry, observe: ModelCallObserver) {
    super();
    this.#inner = inner;
    this.#observe = observe;
  }

  #wrap(model: LanguageModel): LanguageModel {
    let wrapped = this.#wrapped.get(model);
    if (!wrapped) this.#wrapped.set(model, (wrapped = watched(model, this.#observe)));
    return wrapped;
  }

  override register(name: string, model: LanguageModel): this {
    this.#inner.register(name, model);
    return this;
  }
  override unregister(name: string): boolean {
    return this.#inner.unregister(name);
  }
  override has(name: string): boolean {
    return this.#inner.has(name);
  }
  override get(name: string): LanguageModel | undefined {
    const model = this.#inner.get(name);
    return model && this.#wrap(model);
  }
  override providers(): string[] {
    return this.#inner.providers();
  }
  override setSelector(selector: ModelSelector | undefined): void {
    this.#inner.setSelector(selector);
  }
  override resolve(name: string): ResolvedModel {
    const resolved = this.#inner.resolve(name);
    return { ...resolved, model: this.#wrap(resolved.model) };
  }
  override select(ctx: ModelSelectionContext, fallback: string): ResolvedModel {
    const resolved = this.#inner.select(ctx, fallback);
    return { ...resolved, model: this.#wrap(resolved.model) };
  }
}

function watched(model: LanguageModel, observe: ModelCallObserver): LanguageModel {
  const report = (request: CompletionRequest, started: number, outcome: { completion: Completion } | { error: unknown }) => {
    const call: ModelCall = { provider: model.provider, model: request.model ?? "default", durationMs: performance.now() - started };
    if ("completion" in outcome) call.usage = outcome.completion.usage;
    else call.failure = isProviderError(outcome.error) ? outcome.error.kind : "error";
    try {
      observe(call);
    } catch {
      // Watching must never change what the caller gets.
    }
  };
  return {
    provider: model.provider,
    async complete(request) {
      const started = performance.now();
      try {
        const completion = await model.complete(request);
        report(request, started, { completion });
        return completion;
      } catch (error) {
        report(request, started, { error });
        throw error;
      }
    },
    stream(request): CompletionStream {
      // Lazy like every stream: the call starts (and its clock) when someone reads it.
      return createCompletionStream(model.provider, async (sink) => {
        const started = performance.now();
        const signal = request.signal ? AbortSignal.any([request.signal, sink.signal]) : sink.signal;
        try {
          const inner = model.stream({ ...request, signal });
          for await (const chunk of inner) sink.emit(chunk);
          const completion = await inner.final;
          report(request, started, { completion });
          return completion;
        } catch (error) {
          report(request, started, { error });
          throw error;
        }
      });
    },
  };
}
