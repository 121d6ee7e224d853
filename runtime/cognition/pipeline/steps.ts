/**
 * The cognitive steps of the single-call pipeline and the tags each one answers with. A step
 * is what a process lists and what split mode makes one call for; a tag is what the parser
 * reads. They differ only for `user_model_update`, whose answer carries the rewritten model
 * and the one-sentence note on what changed.
 */
import type { CognitiveTag } from "../taggedXml.ts";

export const PIPELINE_STEPS = [
  "internal_monologue",
  "external_dialogue",
  "user_model_check",
  "user_model_update",
  "soul_state_check",
  "soul_state_update",
] as const;

export type PipelineStep = (typeof PIPELINE_STEPS)[number];

export const STEP_TAGS: Readonly<Record<PipelineStep, readonly CognitiveTag[]>> = {
  internal_monologue: ["internal_monologue"],
  external_dialogue: ["external_dialogue"],
  user_model_check: ["user_model_check"],
  user_model_update: ["user_model_update", "model_change_note"],
  soul_state_check: ["soul_state_check"],
  soul_state_update: ["soul_state_update"],
};

/** Steps whose answer only counts when the check before them said true. */
export const CONDITIONAL_STEPS: Readonly<Partial<Record<PipelineStep, PipelineStep>>> = {
  user_model_update: "user_model_check",
  soul_state_update: "soul_state_check",
};

export function isPipelineStep(name: string): name is PipelineStep {
  return (PIPELINE_STEPS as readonly string[]).includes(name);
}

/** The tags a set of steps answers with, in pipeline order. */
export function tagsOf(steps: readonly PipelineStep[]): CognitiveTag[] {
  return orderSteps(steps).flatMap((s) => [...STEP_TAGS[s]]);
}

/** Steps in pipeline order, each once, whatever order a process listed them in. */
export function orderSteps(steps: readonly PipelineStep[]): PipelineStep[] {
  const wanted = new Set(steps);
  return PIPELINE_STEPS.filter((s) => wanted.has(s));
}
