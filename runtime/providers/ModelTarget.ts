/**
 * A model plus which of its model ids to call. The cascade and consensus mix providers, and a
 * single `request.model` cannot name a model for all of them (an Anthropic id means nothing
 * to Groq), so each member carries its own id. `ModelRegistry.resolve` returns this shape.
 */
import type { LanguageModel } from "./LanguageModel.ts";

export interface ModelChoice {
  model: LanguageModel;
  /** The id inside the provider; the provider's default when absent. */
  modelId?: string;
  /** How failures and results name this member; defaults to `provider` or `provider:modelId`. */
  label?: string;
}

export type ModelTarget = LanguageModel | ModelChoice;

export interface NormalisedTarget {
  model: LanguageModel;
  modelId: string | undefined;
  label: string;
}

function isLanguageModel(target: ModelTarget): target is LanguageModel {
  return typeof (target as Partial<LanguageModel>).complete === "function";
}

export function normaliseTarget(target: ModelTarget): NormalisedTarget {
  if (isLanguageModel(target)) return { model: target, modelId: undefined, label: target.provider };
  const { model, modelId, label } = target;
  return { model, modelId, label: label ?? (modelId ? `${model.provider}:${modelId}` : model.provider) };
}
