import { defaultCognitionContext, type CognitionContext } from "../../runtime/cognition/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { ProcessRun } from "./ProcessRun.ts";

/**
 * The cognition context of a soul: the one it was given (or the embedded default) with the
 * blueprint's model choices; each run adds its own abort signal. A step's explicit model wins, then the
 * blueprint's entry for that step, then the context's own selector and default.
 */
export function soulCognition(blueprint: SoulBlueprint, base: CognitionContext | undefined): CognitionContext {
  const ctx = base ?? defaultCognitionContext();
  const { models } = blueprint;
  const soul: CognitionContext = { ...ctx, defaultModel: models.default ?? ctx.defaultModel };
  if (Object.keys(models).some((k) => k !== "default")) {
    soul.modelSelector = ({ step, soul: soulName, requested }) => {
      const wanted = requested ?? models[step];
      return ctx.modelSelector?.({ step, soul: soulName, ...(wanted ? { requested: wanted } : {}) }) ?? wanted;
    };
  }
  return soul;
}

/**
 * The work a run does when no person is waiting on it, for budgets to stop first: a
 * subprocess after the turn, or a turn the soul scheduled for itself (an internal
 * perception). Undefined for a turn someone's message started.
 */
export function autonomousWork(run: Pick<ProcessRun, "kind" | "perception">): "subprocess" | "schedule" | undefined {
  if (run.kind === "subprocess") return "subprocess";
  return run.perception.internal === true ? "schedule" : undefined;
}
