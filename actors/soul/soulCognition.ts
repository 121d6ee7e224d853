import { defaultCognitionContext, type CognitionContext } from "../../runtime/cognition/CognitionContext.ts";
import type { SoulBlueprint } from "./defineSoul.ts";

/**
 * The cognition context of one run: the soul's (or the embedded default), with the run's
 * abort signal and the blueprint's model choices. A step's explicit model wins, then the
 * blueprint's entry for that step, then the context's own selector and default.
 */
export function cognitionForRun(blueprint: SoulBlueprint, base: CognitionContext | undefined, signal: AbortSignal): CognitionContext {
  const ctx = base ?? defaultCognitionContext();
  const { models } = blueprint;
  const run: CognitionContext = { ...ctx, signal, defaultModel: models.default ?? ctx.defaultModel };
  if (Object.keys(models).some((k) => k !== "default")) {
    run.modelSelector = ({ step, soul, requested }) => {
      const wanted = requested ?? models[step];
      return ctx.modelSelector?.({ step, soul, ...(wanted ? { requested: wanted } : {}) }) ?? wanted;
    };
  }
  return run;
}
