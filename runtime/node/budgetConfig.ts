/**
 * A soul's budget in the cluster config: tokens and model calls per hour and per day.
 *
 * ```yaml
 * souls:
 *   - id: sam
 *     blueprint: samantha
 *     budget:
 *       hour: { calls: 60 }
 *       day: { tokens: 200000, calls: 500 }
 *       stops: autonomous     # default; `all`: conversation turns stop at the budget too
 * ```
 *
 * What stops at the budget is the work no person is waiting on (schedules, subprocesses, the
 * ISM, daimons): it would otherwise spend without limit. A person's own messages are counted
 * and still answered, unless `stops: all`.
 */
import { z } from "zod";

const limits = z
  .strictObject({
    /** Input + output tokens in the period. */
    tokens: z.number().int().positive().optional(),
    /** Model calls in the period. */
    calls: z.number().int().positive().optional(),
  })
  .refine((l) => l.tokens !== undefined || l.calls !== undefined, "give tokens, calls or both");

export const BUDGET_STOPS = ["autonomous", "all"] as const;

export const soulBudgetSchema = z
  .strictObject({
    hour: limits.optional(),
    day: limits.optional(),
    stops: z.enum(BUDGET_STOPS).default("autonomous"),
  })
  .refine((b) => b.hour !== undefined || b.day !== undefined, "give an hour or a day budget (or both)");

export type SoulBudgetConfig = z.infer<typeof soulBudgetSchema>;
export type BudgetPeriodName = "hour" | "day";
