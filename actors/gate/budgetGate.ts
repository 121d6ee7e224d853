import type { KvNamespace } from "../../runtime/store/index.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { intercept, type Gate, type GateContext } from "./Gate.ts";

/** Dollars per million tokens, the way providers publish their prices. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

export interface BudgetLimits {
  /** Input + output tokens per period. */
  tokens?: number;
  /** Dollars per period, from the price table. */
  costUsd?: number;
  /** Model calls per period (each usage record is one call). */
  calls?: number;
}

/** A usage record, as providers report it (runtime/providers `Usage`) plus the model that produced it. */
export interface BudgetUsage {
  inputTokens: number;
  outputTokens: number;
  /** `provider:model` or the bare model name; looked up in the price table. */
  model?: string;
  /** Already priced by the caller: used instead of the table. */
  costUsd?: number;
  /** Epoch ms; usage from an earlier period is not charged to this one. Default: now. */
  ts?: number;
}

export type BudgetPeriod = "hour" | "day" | "week" | "month" | { ms: number };

/** One soul's spending in one period. */
export interface BudgetWindow {
  /** Epoch ms when the period began. */
  start: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  calls: number;
  /** Tokens of models missing from the price table (counted as free, so watch this). */
  unpricedTokens: number;
}

export interface BudgetGateOptions {
  name?: string;
  /** Default 90: after security, before anything that shapes the text. */
  priority?: number;
  /** The same limits for every soul, or per soul (undefined: no limit for that soul). */
  limits: BudgetLimits | ((soulId: string) => BudgetLimits | undefined);
  period?: BudgetPeriod;
  /** Keyed by `provider:model` or model name. */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** Makes the windows durable: a restart keeps what was spent (e.g. `(id) => store.kv(id, "gate-budget")`). */
  kv?: (soulId: string) => KvNamespace<BudgetWindow>;
  now?: () => number;
  trigger?: (ctx: GateContext, proposal: Proposal) => boolean;
}

export interface BudgetGate extends Gate {
  /** Charges usage to a soul's current period; resolves once durable (immediately without `kv`). */
  record(soulId: string, usage: BudgetUsage): Promise<void>;
  /** What the soul has spent in the current period. */
  usage(soulId: string): BudgetWindow;
  /** Why the soul is over budget now, or undefined. */
  exceeded(soulId: string): string | undefined;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const KV_KEY = "window";

/**
 * Token, cost and call limits per soul per period, fed from usage records. Once a limit is
 * reached, every proposal of that soul is intercepted until the next period begins.
 */
export function budgetGate(options: BudgetGateOptions): BudgetGate {
  const now = options.now ?? Date.now;
  const period = options.period ?? "day";
  if (typeof period === "object" && !(period.ms > 0)) throw new RangeError("budget gate: a period in ms must be positive");
  const limitsOf = typeof options.limits === "function" ? options.limits : () => options.limits as BudgetLimits;
  const windows = new Map<string, BudgetWindow>();

  const current = (soulId: string, at = now()): BudgetWindow => {
    const start = periodStart(period, at);
    let window = windows.get(soulId);
    if (!window && options.kv) window = options.kv(soulId).get(KV_KEY);
    if (!window || window.start !== start) window = emptyWindow(start);
    windows.set(soulId, window);
    return window;
  };

  const exceeded = (soulId: string): string | undefined => {
    const limits = limitsOf(soulId);
    if (!limits) return undefined;
    const w = current(soulId);
    const tokens = w.inputTokens + w.outputTokens;
    if (limits.tokens !== undefined && tokens >= limits.tokens) return `token budget spent: ${tokens} of ${limits.tokens} tokens this ${describePeriod(period)}`;
    if (limits.calls !== undefined && w.calls >= limits.calls) return `call budget spent: ${w.calls} of ${limits.calls} calls this ${describePeriod(period)}`;
    // Sums of float prices drift (0.045 + 0.005 < 0.05): a nano-dollar is close enough to count as spent.
    if (limits.costUsd !== undefined && w.costUsd >= limits.costUsd - 1e-9) {
      return `cost budget spent: $${w.costUsd.toFixed(4)} of $${limits.costUsd.toFixed(4)} this ${describePeriod(period)}`;
    }
    return undefined;
  };

  return {
    name: options.name ?? "budget",
    priority: options.priority ?? 90,
    ...(options.trigger ? { trigger: options.trigger } : {}),
    verify(proposal) {
      const reason = exceeded(proposal.soulId);
      return reason === undefined ? proposal : intercept(reason);
    },
    async record(soulId, usage) {
      const at = usage.ts ?? now();
      const window = current(soulId);
      // Usage of a finished period is not charged to this one.
      if (periodStart(period, at) !== window.start) return;
      const input = nonNegative(usage.inputTokens);
      const output = nonNegative(usage.outputTokens);
      const price = usage.model !== undefined ? priceOf(options.prices, usage.model) : undefined;
      let cost = 0;
      if (usage.costUsd !== undefined) cost = nonNegative(usage.costUsd);
      else if (price) cost = (input * price.inputPerMTok + output * price.outputPerMTok) / 1_000_000;
      const next: BudgetWindow = {
        start: window.start,
        inputTokens: window.inputTokens + input,
        outputTokens: window.outputTokens + output,
        costUsd: window.costUsd + cost,
        calls: window.calls + 1,
        unpricedTokens: window.unpricedTokens + (usage.costUsd === undefined && !price ? input + output : 0),
      };
      windows.set(soulId, next);
      if (options.kv) await options.kv(soulId).put(KV_KEY, next);
    },
    usage: (soulId) => ({ ...current(soulId) }),
    exceeded,
  };
}

function emptyWindow(start: number): BudgetWindow {
  return { start, inputTokens: 0, outputTokens: 0, costUsd: 0, calls: 0, unpricedTokens: 0 };
}

function nonNegative(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** `provider:model` first, then the bare model name. */
function priceOf(prices: Readonly<Record<string, ModelPrice>> | undefined, model: string): ModelPrice | undefined {
  if (!prices) return undefined;
  if (Object.hasOwn(prices, model)) return prices[model];
  const bare = model.includes(":") ? model.slice(model.indexOf(":") + 1) : model;
  return Object.hasOwn(prices, bare) ? prices[bare] : undefined;
}

/** Periods are calendar periods in UTC, so every node agrees on when one ends. */
export function periodStart(period: BudgetPeriod, at: number): number {
  if (typeof period === "object") return Math.floor(at / period.ms) * period.ms;
  const d = new Date(at);
  switch (period) {
    case "hour":
      return Math.floor(at / HOUR) * HOUR;
    case "day":
      return Math.floor(at / DAY) * DAY;
    case "week": {
      const day = Math.floor(at / DAY) * DAY;
      // getUTCDay: Sunday 0; weeks start on Monday.
      return day - ((d.getUTCDay() + 6) % 7) * DAY;
    }
    case "month":
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

function describePeriod(period: BudgetPeriod): string {
  return typeof period === "object" ? `${period.ms} ms period` : period;
}
