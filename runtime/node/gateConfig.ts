/**
 * The gates section of the cluster config: builtin gates by name with their options, remote
 * gates by skill, (TypeScript) Gate objects, and the skill gates a node serves.
 *
 * It exists apart from the rest of the config because a gate's schema is picked by the key that
 * says what the gate is, so its errors name the wrong field instead of "no union member matched".
 */
import { z } from "zod";
import type { Gate } from "../../actors/gate/index.ts";
import { token } from "./configFields.ts";
import { issueMessage, issuePath } from "./configError.ts";

function isGate(value: unknown): value is Gate {
  const v = value as Partial<Gate> | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && typeof v.priority === "number" && typeof v.verify === "function";
}

const gateCommon = {
  priority: z.number().finite().optional(),
  /** The souls whose chain it joins (default: every soul). */
  souls: z.array(token).optional(),
  name: z.string().min(1).max(128).optional(),
};

const proposalKind = z.enum(["speak", "dispatch", "log"]);

const bouncerSpec = z.strictObject({
  builtin: z.literal("bouncer"),
  ...gateCommon,
  options: z
    .strictObject({
      /** Values that must never leave a soul. */
      vault: z.union([z.array(z.string()), z.record(z.string(), z.string())]).optional(),
      /** Environment variables whose values must never leave (API keys the node holds). */
      vaultEnv: z.array(z.string().min(1)).optional(),
      guardedActions: z.array(z.string()).optional(),
      allowlist: z.array(z.string()).optional(),
    })
    .optional(),
});

const lengthSpec = z.strictObject({
  builtin: z.literal("length"),
  ...gateCommon,
  options: z.strictObject({ maxChars: z.number().int().positive().optional(), kinds: z.array(proposalKind).optional() }).optional(),
});

const budgetSpec = z.strictObject({
  builtin: z.literal("budget"),
  ...gateCommon,
  options: z.strictObject({
    tokens: z.number().int().positive().optional(),
    costUsd: z.number().positive().optional(),
    period: z.enum(["hour", "day", "week", "month"]).optional(),
    prices: z.record(z.string(), z.strictObject({ inputPerMTok: z.number().nonnegative(), outputPerMTok: z.number().nonnegative() })).optional(),
  }),
});

const approvalSpec = z.strictObject({
  builtin: z.literal("approval"),
  ...gateCommon,
  options: z
    .strictObject({
      /** Proposal kinds that need a human (default: dispatch). */
      kinds: z.array(proposalKind).optional(),
      /** Only dispatched actions with these names. */
      actions: z.array(z.string()).optional(),
      reason: z.string().optional(),
    })
    .optional(),
});

const remoteSpec = z.strictObject({
  /** The skill: requests go to `ensoul.<cluster>.gate.<skill>.verify`. */
  remote: token,
  priority: z.number().finite(),
  timeoutMs: z.number().int().positive().optional(),
  souls: z.array(token).optional(),
  name: z.string().min(1).max(128).optional(),
});

const customSpec = z.strictObject({
  gate: z.custom<Gate>(isGate, "must be a Gate object ({ name, priority, verify })"),
  souls: z.array(token).optional(),
});

export const BUILTIN_GATES = ["bouncer", "length", "budget", "approval"] as const;

export type BouncerGateSpec = z.infer<typeof bouncerSpec>;
export type LengthGateSpec = z.infer<typeof lengthSpec>;
export type BudgetGateSpec = z.infer<typeof budgetSpec>;
export type ApprovalGateSpec = z.infer<typeof approvalSpec>;
export type RemoteGateSpec = z.infer<typeof remoteSpec>;
export type CustomGateSpec = z.infer<typeof customSpec>;
/** A gate a node runs in process: builtin by name with options, or (TypeScript) a Gate object. */
export type LocalGateSpec = BouncerGateSpec | LengthGateSpec | BudgetGateSpec | ApprovalGateSpec | CustomGateSpec;
export type GateSpec = LocalGateSpec | RemoteGateSpec;

/**
 * Picks the schema by the key that says what a gate is, so an error names the field that is
 * wrong instead of zod's "no union member matched".
 */
export function gateSpec(allowRemote: boolean) {
  return z.unknown().transform((value, ctx): GateSpec => {
    const v = value as Record<string, unknown> | null;
    let schema: z.ZodType<GateSpec>;
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      ctx.addIssue({ code: "custom", message: `must be a map with ${allowRemote ? "'builtin', 'remote' or 'gate'" : "'builtin' or 'gate'"}` });
      return z.NEVER;
    }
    if ("builtin" in v) {
      const schemas = { bouncer: bouncerSpec, length: lengthSpec, budget: budgetSpec, approval: approvalSpec } as const;
      const which = v.builtin as keyof typeof schemas;
      if (typeof which !== "string" || !(which in schemas)) {
        ctx.addIssue({ code: "custom", message: `unknown builtin gate ${JSON.stringify(v.builtin)} (known: ${BUILTIN_GATES.join(", ")})`, path: ["builtin"] });
        return z.NEVER;
      }
      schema = schemas[which] as z.ZodType<GateSpec>;
    } else if ("remote" in v && allowRemote) schema = remoteSpec;
    else if ("gate" in v) schema = customSpec;
    else {
      ctx.addIssue({ code: "custom", message: `must name a gate: ${allowRemote ? "'builtin: <name>', 'remote: <skill>' or (TypeScript) 'gate: <Gate>'" : "'builtin: <name>' or (TypeScript) 'gate: <Gate>'"}` });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issueMessage(issue), path: issuePath(issue) });
      return z.NEVER;
    }
    return parsed.data;
  });
}

export const skillGateSchema = z.strictObject({
  /** Served on `ensoul.<cluster>.gate.<skill>.verify`, queue group `<skill>`. */
  skill: token,
  /** The node(s) serving it (default: every node, sharing the requests). */
  node: z.union([token, z.array(token)]).optional(),
  /** Deadline for one verify. */
  deadlineMs: z.number().int().positive().optional(),
  // Only builtins and Gate objects get past gateSpec(false).
  gate: gateSpec(false) as unknown as z.ZodType<LocalGateSpec, unknown>,
});
