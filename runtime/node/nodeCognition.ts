/**
 * The node's cognition: one model registry (the providers whose keys the environment holds,
 * always `offline`), the config's default model, per-soul models, and usage charged to the
 * soul's budget gates. Souls are told apart by the turn that is running (`currentTurn()`),
 * because a step only knows the soul's display name and two souls may share a blueprint.
 *
 * Model precedence for a step: the model the step asks for, then the soul's model from the
 * config (`providers.souls`), then the blueprint's own default, then `providers.default`,
 * then the best provider with a key (else offline).
 *
 * The souls' own budgets (soulBudgets.ts) are checked before each call (`admit`) and charged
 * after it; a daimon thinks in a context of its own (`forDaimon`) that charges its soul, since
 * no turn is running when it divines. With `observe`, every call is reported (metrics).
 */
import { currentTurn } from "../../actors/soul/index.ts";
import type { CognitionContext } from "../cognition/index.ts";
import { createDefaultRegistry, defaultModelName, type ModelRegistry } from "../providers/index.ts";
import type { ClusterConfig } from "./clusterConfig.ts";
import type { BuiltGate } from "./gates.ts";
import { observeModels, type ModelCallObserver } from "./observedModels.ts";
import type { SoulBudgets } from "./soulBudgets.ts";

export interface NodeCognitionOptions {
  config: ClusterConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** A registry to use instead of one built from the environment (tests, benchmarks). */
  registry?: ModelRegistry;
  /** The budget gates of a soul, to charge its usage to. */
  budgetsOf(soulId: string): readonly BuiltGate[];
  /** The souls' own budgets, when any hosted soul has one. */
  budgets?: SoulBudgets;
  /** Told of the tokens each of the node's souls spends in its turns. */
  spent?(soulId: string, input: number, output: number): void;
  /** Told of every model call made through the node's registry (metrics). */
  observe?: ModelCallObserver;
  onError(err: unknown, what: string): void;
}

export interface NodeCognition {
  /** What the node's souls think with. */
  readonly cognition: CognitionContext;
  /** What a daimon of this soul thinks with: its calls are the soul's autonomous work. */
  forDaimon(soulId: string): CognitionContext;
}

export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelConfigError";
  }
}

export function nodeCognition(o: NodeCognitionOptions): NodeCognition {
  const base = o.registry ?? createDefaultRegistry(o.env);
  const registry = o.observe ? observeModels(base, o.observe) : base;
  const defaultModel = o.config.providers.default ?? defaultModelName(o.env);
  const perSoul = new Map(Object.entries(o.config.providers.souls ?? {}));

  // A model whose provider has no key fails here, at start, not at a soul's first turn.
  const check = (field: string, name: string) => {
    try {
      registry.resolve(name);
    } catch (err) {
      throw new ModelConfigError(`${field}: ${(err as Error).message}`);
    }
  };
  check("providers.default", defaultModel);
  for (const [soul, model] of perSoul) check(`providers.souls.${soul}`, model);
  // A builtin daimon's own model choice is its business (Kothar takes Groq when there is a key); only ours is checked.
  o.config.daimons.forEach((d, i) => d.model !== undefined && check(`daimons[${i}].model`, d.model));

  const { budgets } = o;
  const cognition: CognitionContext = {
    registry,
    defaultModel,
    modelSelector: ({ requested }) => {
      if (requested !== undefined || perSoul.size === 0) return undefined;
      const soulId = currentTurn()?.soulId;
      return soulId === undefined ? undefined : perSoul.get(soulId);
    },
    onUsage: (usage, info) => {
      const soulId = currentTurn()?.soulId;
      if (soulId === undefined) return;
      const model = `${info.provider}:${info.model}`;
      o.spent?.(soulId, usage.inputTokens, usage.outputTokens);
      for (const b of o.budgetsOf(soulId)) {
        b.budget?.record(soulId, { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, model }).catch((err: unknown) => o.onError(err, `budget of ${soulId}`));
      }
      budgets?.charge(soulId, usage, model);
    },
    ...(budgets
      ? {
          admit: (call) => {
            const soulId = currentTurn()?.soulId;
            if (soulId !== undefined) budgets.admit(soulId, call.work);
          },
        }
      : {}),
  };
  return {
    cognition,
    forDaimon: (soulId) =>
      budgets
        ? {
            ...cognition,
            work: "daimon",
            admit: () => budgets.admit(soulId, "daimon"),
            onUsage: (usage, info) => budgets.charge(soulId, usage, `${info.provider}:${info.model}`),
          }
        : cognition,
  };
}
