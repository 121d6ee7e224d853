import { AsyncLocalStorage } from "node:async_hooks";
import type { LanguageModel, Usage } from "../providers/LanguageModel.ts";
import { createDefaultRegistry, defaultModelName, type ModelRegistry } from "../providers/registry.ts";

/** Everything a cognitive step needs from its surroundings, bound per turn. */
export interface CognitionContext {
  registry: ModelRegistry;
  /** `provider:model` used when a step names none. */
  defaultModel: string;
  /** May pick another model for a step, from the context (cheap model for summaries, ...). */
  modelSelector?: (ctx: { step: string; soul: string; requested?: string }) => string | undefined;
  /** Told of every model call, for budgets and benchmarks. */
  onUsage?: (usage: Usage, info: { step: string; provider: string; model: string; soul: string }) => void;
  /** Aborts every step of the turn (a cancelled subprocess, a stopping soul). */
  signal?: AbortSignal;
}

const storage = new AsyncLocalStorage<CognitionContext>();
let fallback: CognitionContext | undefined;

/** The embedded default: providers from the environment, the offline model when no key is set. */
export function defaultCognitionContext(): CognitionContext {
  fallback ??= { registry: createDefaultRegistry(process.env), defaultModel: defaultModelName(process.env) };
  return fallback;
}

export function runWithCognition<T>(ctx: CognitionContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentCognition(): CognitionContext {
  return storage.getStore() ?? defaultCognitionContext();
}

export interface ResolvedModel {
  model: LanguageModel;
  modelId: string;
  name: string;
}

/** Turns a step's requested model (or the context default) into a provider and model id. */
export function resolveStepModel(ctx: CognitionContext, step: string, soul: string, requested?: string): ResolvedModel {
  const name = ctx.modelSelector?.({ step, soul, requested }) ?? requested ?? ctx.defaultModel;
  const { model, modelId } = ctx.registry.resolve(name);
  return { model, modelId, name };
}
