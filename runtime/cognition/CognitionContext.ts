import { AsyncLocalStorage } from "node:async_hooks";
import type { StepTally, StepTraceListener } from "./stepTrace.ts";
import type { ToolBox } from "./ToolBox.ts";
import type { Completion, LanguageModel, Usage } from "../providers/index.ts";
import { createDefaultRegistry, defaultModelName, type ModelRegistry } from "../providers/index.ts";

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
  /**
   * Set while work runs that no person is waiting on: `schedule`, `subprocess`, `ism`,
   * `daimon`. Budgets stop such work first (undefined: a turn someone's message started).
   */
  work?: string;
  /**
   * Asked before every step's model call, with the call about to be made; it throws to refuse
   * the call (a soul whose budget is spent), and the step fails with that error at once.
   */
  admit?: (call: ModelCallRequest) => void;
  /** Told of every step once it ends (stepTrace.ts): what the turn log keeps for the debugger. */
  onStep?: StepTraceListener;
  /** The tools this turn may call (ToolBox.ts), for the `toolUse` step. */
  tools?: ToolBox;
}

/** A model call about to be made, as `admit` sees it. */
export interface ModelCallRequest {
  step: string;
  soul: string;
  /** `provider:model`. */
  model: string;
  work?: string;
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

/** Turns a step's requested model (or the context default) into a provider and model id; throws if the context refuses the call. */
export function resolveStepModel(ctx: CognitionContext, step: string, soul: string, requested?: string): ResolvedModel {
  // The turn's selector speaks first; otherwise the registry's own selector (if one was set
  // there) decides, falling back to the requested name and then the turn's default.
  const chosen = ctx.modelSelector?.({ step, soul, requested });
  const { model, modelId, name } =
    chosen !== undefined ? ctx.registry.resolve(chosen) : ctx.registry.select({ step, soul, requested }, ctx.defaultModel);
  // Every step resolves its model right before calling it: the one place to refuse a call.
  ctx.admit?.({ step, soul, model: name, ...(ctx.work !== undefined ? { work: ctx.work } : {}) });
  return { model, modelId, name };
}

/** Tells the context's usage listener what one model call cost. */
export function reportUsage(ctx: CognitionContext, completion: Completion, step: string, soul: string, tally?: StepTally): Usage {
  ctx.onUsage?.(completion.usage, { step, soul, provider: completion.provider, model: completion.model });
  tally?.add(completion);
  return completion.usage;
}

/** The caller's signal and the turn's (a cancelled subprocess, a stopping soul), either one aborting. */
export function combineSignals(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length <= 1 ? present[0] : AbortSignal.any(present);
}
