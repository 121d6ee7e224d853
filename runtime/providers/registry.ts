/**
 * The model registry: providers registered by name, models named `provider:model` and chosen
 * per cognitive step, with a selector hook that may override the choice (a cheap model for
 * summaries, an expensive one for code: neurosymbolic-bridge's model selector).
 */
import { createAnthropicModel, ANTHROPIC_DEFAULT_MODEL } from "./anthropic.ts";
import { createGroqModel, GROQ_DEFAULT_MODEL } from "./groq.ts";
import type { LanguageModel } from "./LanguageModel.ts";
import { createOfflineModel } from "./offline.ts";
import { withRetry, type RetryOptions } from "./retry.ts";

export interface ModelSelectionContext {
  /** The cognitive step asking (e.g. "externalDialog"). */
  step?: string;
  soul?: string;
  /** The `provider:model` the step asked for, if any. */
  requested?: string;
}

/** Returns a `provider:model` to use instead, or undefined to keep the request. */
export type ModelSelector = (ctx: ModelSelectionContext) => string | undefined;

export interface ResolvedModel {
  model: LanguageModel;
  /** The id inside the provider: the part after the first `:`. */
  modelId: string;
  /** The full `provider:model` name that was resolved. */
  name: string;
}

export interface ParsedModelName {
  provider: string;
  modelId: string;
}

/** Thrown for a name that is malformed or names an unregistered provider. */
export class ModelNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelNameError";
  }
}

const PROVIDER_NAME = /^[a-z][a-z0-9_-]*$/i;

/**
 * Splits at the first `:` only: model ids may contain colons themselves
 * (`groq:org/model:variant`), provider names may not.
 */
export function parseModelName(name: string): ParsedModelName {
  const colon = name.indexOf(":");
  const provider = colon < 0 ? "" : name.slice(0, colon).trim();
  const modelId = colon < 0 ? "" : name.slice(colon + 1).trim();
  if (!provider || !modelId || !PROVIDER_NAME.test(provider)) {
    throw new ModelNameError(
      `Malformed model name '${name}': expected 'provider:model', e.g. 'anthropic:${ANTHROPIC_DEFAULT_MODEL}' or 'offline:echo'`,
    );
  }
  return { provider, modelId };
}

export class ModelRegistry {
  readonly #providers = new Map<string, LanguageModel>();
  #selector: ModelSelector | undefined;

  constructor(opts: { selector?: ModelSelector } = {}) {
    this.#selector = opts.selector;
  }

  /** Adds or replaces a provider. The name is what `provider:model` names refer to. */
  register(name: string, model: LanguageModel): this {
    if (!PROVIDER_NAME.test(name)) {
      throw new ModelNameError(`Invalid provider name '${name}': use letters, digits, '-' or '_', starting with a letter`);
    }
    this.#providers.set(name, model);
    return this;
  }

  unregister(name: string): boolean {
    return this.#providers.delete(name);
  }

  has(name: string): boolean {
    return this.#providers.has(name);
  }

  get(name: string): LanguageModel | undefined {
    return this.#providers.get(name);
  }

  /** Registered provider names, in registration order. */
  providers(): string[] {
    return [...this.#providers.keys()];
  }

  setSelector(selector: ModelSelector | undefined): void {
    this.#selector = selector;
  }

  /** Resolves a `provider:model` name as given, without consulting the selector. */
  resolve(name: string): ResolvedModel {
    const { provider, modelId } = parseModelName(name);
    const model = this.#providers.get(provider);
    if (!model) {
      const registered = this.providers();
      throw new ModelNameError(
        `Unknown model provider '${provider}' in '${name}'; registered: ${registered.length ? registered.join(", ") : "(none)"}`,
      );
    }
    return { model, modelId, name };
  }

  /**
   * The model for one step: the selector's choice if it makes one, else the requested name,
   * else `fallback`. A selector that names a bad model fails loudly rather than being ignored.
   */
  select(ctx: ModelSelectionContext, fallback: string): ResolvedModel {
    const name = this.#selector?.(ctx) ?? ctx.requested ?? fallback;
    return this.resolve(name);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

/** The model a step uses when it names none: the best provider that has a key, else offline. */
export function defaultModelName(env: Env = process.env): string {
  if (present(env["ANTHROPIC_API_KEY"])) return `anthropic:${ANTHROPIC_DEFAULT_MODEL}`;
  if (present(env["GROQ_API_KEY"])) return `groq:${GROQ_DEFAULT_MODEL}`;
  return "offline:echo";
}

/**
 * `offline` always; `anthropic` and `groq` when their keys are set. Only `env` is read (not
 * `process.env` behind its back), so a test or a node config gets exactly what it passed. The
 * real providers come wrapped in `withRetry`, because their SDK retries are off and a bare
 * 429 should not reach a soul.
 */
export function createDefaultRegistry(env: Env = process.env, opts: { retry?: RetryOptions } = {}): ModelRegistry {
  const registry = new ModelRegistry();
  registry.register("offline", createOfflineModel());
  const anthropicKey = env["ANTHROPIC_API_KEY"];
  if (present(anthropicKey)) {
    const baseURL = env["ANTHROPIC_BASE_URL"];
    registry.register(
      "anthropic",
      withRetry(createAnthropicModel({ apiKey: anthropicKey, baseURL: present(baseURL) ? baseURL : null }), opts.retry),
    );
  }
  const groqKey = env["GROQ_API_KEY"];
  if (present(groqKey)) {
    const baseURL = env["GROQ_BASE_URL"];
    registry.register(
      "groq",
      withRetry(createGroqModel({ apiKey: groqKey, baseURL: present(baseURL) ? baseURL : null }), opts.retry),
    );
  }
  return registry;
}
