/**
 * The souls' budgets (budgetConfig.ts): each model call a soul makes (its turns, subprocesses,
 * ISM, schedules and daimons) is charged to its hour and day windows, and once a window is
 * spent the soul's autonomous work is refused before it calls a model: the step fails at once
 * with a BudgetSpentError that says which budget and until when, the soul reports the failed
 * turn as usual, and the node raises one `node.budget` event and one log line per window.
 *
 * The accounting is the budget gate's (actors/gate/budgetGate.ts: calendar periods in UTC,
 * windows kept in the soul's LMDB so a restart remembers what was spent), one per period.
 */
import { budgetGate, periodStart, type BudgetGate } from "../../actors/gate/index.ts";
import type { Usage } from "../providers/index.ts";
import type { Store } from "../store/index.ts";
import type { BudgetPeriodName } from "./budgetConfig.ts";
import type { SoulConfig } from "./clusterConfig.ts";

const PERIODS: readonly BudgetPeriodName[] = ["hour", "day"];
const NEXT: Record<BudgetPeriodName, number> = { hour: 3_600_000, day: 86_400_000 };

/** What a refused call is told, and what the soul's failed turn reports. */
export class BudgetSpentError extends Error {
  readonly soulId: string;
  readonly period: BudgetPeriodName;
  readonly work: string;
  /** Epoch ms when the period ends and the budget is fresh again. */
  readonly resumesAt: number;

  constructor(o: { soulId: string; period: BudgetPeriodName; work: string; reason: string; resumesAt: number }) {
    super(`soul '${o.soulId}': ${o.reason}; ${o.work === "turn" ? "its turns stop" : `its autonomous work (${o.work}) stops`} until ${new Date(o.resumesAt).toISOString()}`);
    this.name = "BudgetSpentError";
    this.soulId = o.soulId;
    this.period = o.period;
    this.work = o.work;
    this.resumesAt = o.resumesAt;
  }
}

export interface SoulBudgets {
  /** Throws a BudgetSpentError when this work of the soul must stop at its spent budget. `work` undefined: a conversation turn. */
  admit(soulId: string, work: string | undefined): void;
  /** Charges one model call to the soul's windows. */
  charge(soulId: string, usage: Usage, model: string): void;
}

export interface SoulBudgetsOptions {
  hosted: ReadonlyMap<string, SoulConfig>;
  store: Pick<Store, "kv">;
  /** The first refusal of a window: the node's event and log line. */
  onSpent(error: BudgetSpentError): void;
  /** Every refusal (metrics). */
  onRefused?(soulId: string, work: string): void;
  onError(err: unknown, what: string): void;
  now?: () => number;
}

/** Undefined when no soul the node hosts has a budget: then there is nothing to check per call. */
export function createSoulBudgets(o: SoulBudgetsOptions): SoulBudgets | undefined {
  if (![...o.hosted.values()].some((s) => s.budget)) return undefined;
  const now = o.now ?? Date.now;
  const windows = PERIODS.map((period) => ({
    period,
    gate: budgetGate({
      name: `${period} budget`,
      period,
      limits: (soulId) => o.hosted.get(soulId)?.budget?.[period],
      kv: (soulId) => o.store.kv(soulId, `budget-${period}`),
      now,
    }),
  })) satisfies { period: BudgetPeriodName; gate: BudgetGate }[];
  /** The window each soul was last told about, so a spent budget is announced once per window. */
  const announced = new Map<string, number>();

  return {
    admit(soulId, work) {
      const budget = o.hosted.get(soulId)?.budget;
      if (!budget || (work === undefined && budget.stops !== "all")) return;
      for (const { period, gate } of windows) {
        const reason = gate.exceeded(soulId);
        if (reason === undefined) continue;
        const start = periodStart(period, now());
        const error = new BudgetSpentError({ soulId, period, work: work ?? "turn", reason, resumesAt: start + NEXT[period] });
        o.onRefused?.(soulId, error.work);
        const key = `${soulId}/${period}`;
        if (announced.get(key) !== start) {
          announced.set(key, start);
          o.onSpent(error);
        }
        throw error;
      }
    },
    charge(soulId, usage, model) {
      if (!o.hosted.get(soulId)?.budget) return;
      for (const { period, gate } of windows) {
        gate.record(soulId, { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, model }).catch((err: unknown) => o.onError(err, `the ${period} budget of ${soulId}`));
      }
    },
  };
}
