/**
 * The config's gates made real: each soul's chain (builtins with their options, remote
 * skill gates by skill name, TypeScript Gate objects) and the skill-gate actors a node
 * serves. A gate entry without `souls` joins every soul's chain.
 */
import {
  approvalGate,
  bouncer,
  budgetGate,
  lengthGate,
  remoteGate,
  type BudgetGate,
  type Gate,
} from "../../actors/gate/index.ts";
import type { ProposalKind } from "../../actors/soul/index.ts";
import type { Bus } from "../bus/index.ts";
import type { Store } from "../store/index.ts";
import type { GateSpec, LocalGateSpec } from "./gateConfig.ts";

export interface GateBuildContext {
  bus: Bus;
  cluster: string;
  store: Store;
  env: Readonly<Record<string, string | undefined>>;
}

export interface BuiltGate {
  gate: Gate;
  /** Souls whose chain it joins; undefined: every soul. */
  souls: readonly string[] | undefined;
  /** Set for budget gates: usage is charged to them. */
  budget?: BudgetGate;
}

/** A gate run in this process: a builtin with its options, or a Gate object. */
export function buildLocalGate(spec: LocalGateSpec, ctx: GateBuildContext): { gate: Gate; budget?: BudgetGate } {
  if ("gate" in spec) return { gate: spec.gate };
  const common = { ...(spec.name !== undefined ? { name: spec.name } : {}), ...(spec.priority !== undefined ? { priority: spec.priority } : {}) };
  switch (spec.builtin) {
    case "bouncer": {
      const o = spec.options ?? {};
      const fromEnv = (o.vaultEnv ?? []).map((name) => ctx.env[name]).filter((v): v is string => typeof v === "string" && v.trim() !== "");
      const listed = o.vault === undefined ? [] : Array.isArray(o.vault) ? o.vault : Object.values(o.vault);
      const vault = [...listed, ...fromEnv];
      return {
        gate: bouncer({
          ...common,
          ...(vault.length ? { vault } : {}),
          ...(o.guardedActions ? { guardedActions: o.guardedActions } : {}),
          ...(o.allowlist ? { allowlist: o.allowlist } : {}),
        }),
      };
    }
    case "length": {
      const o = spec.options ?? {};
      return { gate: lengthGate({ ...common, ...(o.maxChars !== undefined ? { maxChars: o.maxChars } : {}), ...(o.kinds ? { kinds: o.kinds } : {}) }) };
    }
    case "budget": {
      const o = spec.options;
      const budget = budgetGate({
        ...common,
        limits: { ...(o.tokens !== undefined ? { tokens: o.tokens } : {}), ...(o.costUsd !== undefined ? { costUsd: o.costUsd } : {}) },
        ...(o.period ? { period: o.period } : {}),
        ...(o.prices ? { prices: o.prices } : {}),
        kv: (soulId) => ctx.store.kv(soulId, "gate-budget"),
      });
      return { gate: budget, budget };
    }
    case "approval": {
      const o = spec.options ?? {};
      const kinds = new Set<ProposalKind>(o.kinds ?? ["dispatch"]);
      const actions = o.actions ? new Set(o.actions) : undefined;
      return {
        gate: approvalGate({
          ...common,
          requires: (p) => kinds.has(p.kind) && (actions === undefined || (p.action !== undefined && actions.has(p.action))),
          ...(o.reason !== undefined ? { reason: o.reason } : {}),
        }),
      };
    }
  }
}

export function buildGate(spec: GateSpec, ctx: GateBuildContext): BuiltGate {
  if ("remote" in spec) {
    return {
      gate: remoteGate({
        bus: ctx.bus,
        cluster: ctx.cluster,
        skill: spec.remote,
        priority: spec.priority,
        ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
        ...(spec.name !== undefined ? { name: spec.name } : {}),
      }),
      souls: spec.souls,
    };
  }
  const { gate, budget } = buildLocalGate(spec, ctx);
  return { gate, souls: spec.souls, ...(budget ? { budget } : {}) };
}

/** The gates of one soul's chain (the chain sorts them by priority). */
export function gatesOf(built: readonly BuiltGate[], soulId: string): BuiltGate[] {
  return built.filter((b) => b.souls === undefined || b.souls.includes(soulId));
}
