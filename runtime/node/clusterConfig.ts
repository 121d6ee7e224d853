/**
 * The cluster config: which souls run, on which node, with which daimons, gates, models and
 * data directory. It comes from a YAML file or a TypeScript module (loadClusterConfig.ts),
 * or straight from code; either way it is checked here, once, with one schema. A mistake is
 * reported as one line naming the file and the field (`cluster.yaml: souls[1].blueprint:
 * unknown soul 'x' (known: samantha)`), never as a stack trace at the first perception.
 *
 * A TypeScript config may pass objects where YAML can only name things: a soul blueprint
 * (`defineSoul(...)`) instead of a builtin soul's name, a Gate object instead of a builtin.
 */
import { z } from "zod";
import type { Gate } from "../../actors/gate/index.ts";
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import { DAIMON_MODES, type DaimonMode } from "../../actors/daimon/index.ts";
import { parseModelName } from "../providers/index.ts";
import { builtinDaimons, builtinSouls } from "../../souls/index.ts";

const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;
const token = z.string().regex(TOKEN, "may contain only A-Z a-z 0-9 _ - (1 to 128 characters)");

const modelName = z.string().superRefine((value, ctx) => {
  try {
    parseModelName(value);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
  }
});

function isBlueprint(value: unknown): value is SoulBlueprint {
  const v = value as Partial<SoulBlueprint> | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && v.processes instanceof Map && typeof v.allows === "function";
}

function isGate(value: unknown): value is Gate {
  const v = value as Partial<Gate> | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && typeof v.priority === "number" && typeof v.verify === "function";
}

const blueprintRef = z.union([z.string().min(1), z.custom<SoulBlueprint>(isBlueprint, "must be a builtin soul's name or a blueprint made with defineSoul()")]);

const soulSchema = z.strictObject({
  /** The soul's id: its subjects, its LMDB keyspace. */
  id: token,
  /** A builtin soul's name (`samantha`) or, in a TypeScript config, a blueprint. */
  blueprint: blueprintRef,
  /** The node that hosts it; unassigned souls go to the first node. */
  node: token.optional(),
  /** Souls whose final speech this soul perceives. */
  hears: z.array(token).optional(),
  /**
   * Publish streamed chunks before the gates have seen the whole text. Default: true for a
   * soul without gates, false for a gated one (a secret split across chunks would get past
   * the bouncer).
   */
  streamChunks: z.boolean().optional(),
});

const daimonSchema = z
  .strictObject({
    soul: token,
    /** A daimon that ships with ensoul (`kothar`): its name, persona, model and rhythm, unless given here. */
    builtin: z.string().min(1).optional(),
    name: z.string().min(1).max(128).optional(),
    /** The daimon's soul.md, inline... */
    persona: z.string().min(1).optional(),
    /** ...or from a file, relative to the config file. */
    personaFile: z.string().min(1).optional(),
    model: modelName.optional(),
    mode: z.enum(DAIMON_MODES).optional(),
    everyN: z.number().int().positive().optional(),
  })
  .superRefine((d, ctx) => {
    if (d.builtin !== undefined) return;
    if (d.name === undefined) ctx.addIssue({ code: "custom", message: "required (or name a builtin daimon with builtin:)", path: ["name"] });
    if (d.persona === undefined && d.personaFile === undefined) ctx.addIssue({ code: "custom", message: "needs a persona or a personaFile (or a builtin daimon)", path: ["persona"] });
    if (d.mode === undefined) ctx.addIssue({ code: "custom", message: `required: one of ${DAIMON_MODES.join(", ")}`, path: ["mode"] });
  });

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
function gateSpec(allowRemote: boolean) {
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

const skillGateSchema = z.strictObject({
  /** Served on `ensoul.<cluster>.gate.<skill>.verify`, queue group `<skill>`. */
  skill: token,
  /** The node(s) serving it (default: every node, sharing the requests). */
  node: z.union([token, z.array(token)]).optional(),
  /** Deadline for one verify. */
  deadlineMs: z.number().int().positive().optional(),
  // Only builtins and Gate objects get past gateSpec(false).
  gate: gateSpec(false) as unknown as z.ZodType<LocalGateSpec, unknown>,
});

const bridgeSchema = z.strictObject({
  type: z.enum(["slack", "discord", "terminal", "http"]),
  soul: token,
  node: token.optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

const runtimeSchema = z.strictObject({
  /** Node heartbeat period on `ensoul.<cluster>.node.<id>.heartbeat`. */
  heartbeatMs: z.number().int().min(50).default(1_000),
  /** How long a delivered, unacked perception waits before JetStream redelivers it. */
  ackWaitMs: z.number().int().min(200).default(30_000),
  /** Perceptions a node takes in at once (across souls; each soul's stay in order). */
  maxInFlight: z.number().int().min(1).max(10_000).default(256),
  /** Passivate a soul idle this long (0: never). */
  passivateAfterMs: z.number().int().min(0).default(600_000),
  /**
   * The first node dead-letters perceptions for souls no node of this config hosts. Turn it
   * off when processes outside this config host souls in the same cluster.
   */
  deadLetterUnknownSouls: z.boolean().default(true),
});

export const clusterConfigSchema = z
  .strictObject({
    /** The cluster namespace: `ensoul.<cluster>.*`, stream `ENSOUL_<cluster>`. */
    cluster: token.default("local"),
    /** The data directory; each node keeps its LMDB environment in `<data>/<node>`. */
    data: z.string().min(1).optional(),
    /** The nodes, first one first: it hosts unassigned souls and reports unknown souls. */
    nodes: z.array(token).min(1).optional(),
    providers: z
      .strictObject({
        /** `provider:model` for every soul without its own. */
        default: modelName.optional(),
        /** `provider:model` per soul id. */
        souls: z.record(z.string(), modelName).optional(),
      })
      .default({}),
    souls: z.array(soulSchema).min(1, "a cluster needs at least one soul"),
    daimons: z.array(daimonSchema).default([]),
    gates: z.array(gateSpec(true)).default([]),
    skillGates: z.array(skillGateSchema).default([]),
    /** Who may approve or deny held proposals (with `approve`/`deny` perceptions). */
    approvals: z.strictObject({ authorizedUsers: z.array(z.string().min(1)).min(1) }).optional(),
    /** Reserved: validated, not started yet. */
    bridges: z.array(bridgeSchema).default([]),
    runtime: runtimeSchema.default({ heartbeatMs: 1_000, ackWaitMs: 30_000, maxInFlight: 256, passivateAfterMs: 600_000, deadLetterUnknownSouls: true }),
  })
  .superRefine((config, ctx) => crossCheck(config, ctx));

export type ClusterConfig = z.infer<typeof clusterConfigSchema>;
/** What a config file or module holds before validation. */
export type ClusterConfigInput = z.input<typeof clusterConfigSchema>;
export type SoulConfig = ClusterConfig["souls"][number];
export type DaimonConfigEntry = ClusterConfig["daimons"][number];
export type SkillGateConfig = ClusterConfig["skillGates"][number];
export type BridgeConfig = ClusterConfig["bridges"][number];
export type RuntimeSettings = ClusterConfig["runtime"];

/** Checks that need the whole config: ids that refer to each other. */
function crossCheck(config: ClusterConfig, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", message, path });
  const ids = config.souls.map((s) => s.id);
  const known = new Set(ids);
  const listed = `souls in this config: ${ids.join(", ")}`;
  const nodes = config.nodes ? new Set(config.nodes) : null;
  const nodeList = config.nodes?.join(", ") ?? "";

  config.nodes?.forEach((n, i) => {
    if (config.nodes!.indexOf(n) !== i) issue(["nodes", i], `duplicate node '${n}'`);
  });
  config.souls.forEach((soul, i) => {
    if (ids.indexOf(soul.id) !== i) issue(["souls", i, "id"], `duplicate soul id '${soul.id}'`);
    if (typeof soul.blueprint === "string" && !Object.hasOwn(builtinSouls, soul.blueprint)) {
      issue(["souls", i, "blueprint"], `unknown soul '${soul.blueprint}' (known: ${Object.keys(builtinSouls).join(", ")})`);
    }
    if (soul.node !== undefined && nodes && !nodes.has(soul.node)) issue(["souls", i, "node"], `unknown node '${soul.node}' (nodes: ${nodeList})`);
    soul.hears?.forEach((heard, j) => {
      if (heard === soul.id) issue(["souls", i, "hears", j], `a soul cannot hear itself ('${heard}')`);
      else if (!known.has(heard)) issue(["souls", i, "hears", j], `unknown soul '${heard}' (${listed})`);
    });
  });
  config.daimons.forEach((d, i) => {
    if (!known.has(d.soul)) issue(["daimons", i, "soul"], `unknown soul '${d.soul}' (${listed})`);
    if (d.builtin !== undefined && !Object.hasOwn(builtinDaimons, d.builtin)) {
      issue(["daimons", i, "builtin"], `unknown daimon '${d.builtin}' (known: ${Object.keys(builtinDaimons).join(", ")})`);
      return;
    }
    const name = daimonName(d);
    const twin = config.daimons.findIndex((o) => o.soul === d.soul && daimonName(o) === name);
    if (twin !== i) issue(["daimons", i, "name"], `soul '${d.soul}' already has a daimon named '${name}'`);
  });
  config.gates.forEach((g, i) => {
    g.souls?.forEach((s, j) => {
      if (!known.has(s)) issue(["gates", i, "souls", j], `unknown soul '${s}' (${listed})`);
    });
  });
  config.skillGates.forEach((g, i) => {
    const servers = g.node === undefined ? [] : Array.isArray(g.node) ? g.node : [g.node];
    servers.forEach((n, j) => {
      if (nodes && !nodes.has(n)) issue(["skillGates", i, "node", ...(Array.isArray(g.node) ? [j] : [])], `unknown node '${n}' (nodes: ${nodeList})`);
    });
    if (config.skillGates.findIndex((o) => o.skill === g.skill) !== i) issue(["skillGates", i, "skill"], `skill '${g.skill}' is served twice; list its nodes in one entry`);
  });
  for (const id of Object.keys(config.providers.souls ?? {})) {
    if (!known.has(id)) issue(["providers", "souls", id], `unknown soul '${id}' (${listed})`);
  }
  config.bridges.forEach((b, i) => {
    if (!known.has(b.soul)) issue(["bridges", i, "soul"], `unknown soul '${b.soul}' (${listed})`);
  });
}

/** A config that does not validate; the message is one line: `<file>: <field>: <problem>`. */
export class ConfigError extends Error {
  readonly file: string;
  readonly field: string;
  constructor(file: string, field: string, problem: string) {
    super(field ? `${file}: ${field}: ${problem}` : `${file}: ${problem}`);
    this.name = "ConfigError";
    this.file = file;
    this.field = field;
  }
}

/** `["souls", 1, "blueprint"]` → `souls[1].blueprint`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))) out += out ? `.${String(part)}` : String(part);
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

function issuePath(issue: z.core.$ZodIssue): PropertyKey[] {
  // An unknown key is reported on its parent; the key itself is the field to name.
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0) return [...issue.path, issue.keys[0]];
  return [...issue.path];
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return issue.keys.length > 1 ? `unknown fields ${issue.keys.join(", ")}` : "unknown field";
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "required";
  return issue.message.replace(/^Invalid input: /, "");
}

/**
 * Validates a config (already read from its file, or built in code). `file` is what the error
 * names: the path as the user gave it.
 */
export function parseClusterConfig(raw: unknown, file = "cluster config"): ClusterConfig {
  const parsed = clusterConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  throw new ConfigError(file, formatPath(issuePath(first)), issueMessage(first));
}

export type Placement = "all" | "assigned";

/** The node that hosts unassigned souls and dead-letters perceptions for souls no node hosts. */
export function firstNode(config: ClusterConfig, fallback = "local"): string {
  return config.nodes?.[0] ?? config.souls.find((s) => s.node !== undefined)?.node ?? fallback;
}

/** Every node the config names, first node first. */
export function configNodes(config: ClusterConfig): string[] {
  const out = [...(config.nodes ?? [])];
  for (const soul of config.souls) if (soul.node !== undefined && !out.includes(soul.node)) out.push(soul.node);
  return out;
}

/**
 * The node a soul runs on when souls are spread over nodes. A config that names no node at
 * all has one node, whatever it is called: `fallback`.
 */
export function nodeOf(config: ClusterConfig, soul: SoulConfig, fallback = "local"): string {
  return soul.node ?? firstNode(config, fallback);
}

/**
 * The souls one node hosts: all of them in a single-process run, else those the config
 * assigns to it (unassigned souls go to the first node; with no node named anywhere, to
 * this one).
 */
export function soulsFor(config: ClusterConfig, nodeId: string, placement: Placement): SoulConfig[] {
  if (placement === "all") return [...config.souls];
  return config.souls.filter((s) => nodeOf(config, s, nodeId) === nodeId);
}

/** Whether a node serves a skill gate: listed, or every node when none is listed. */
export function servesSkill(gate: SkillGateConfig, nodeId: string, placement: Placement): boolean {
  if (placement === "all" || gate.node === undefined) return true;
  return Array.isArray(gate.node) ? gate.node.includes(nodeId) : gate.node === nodeId;
}

function daimonName(d: DaimonConfigEntry): string | undefined {
  return d.name ?? (d.builtin !== undefined ? builtinDaimons[d.builtin]?.name : undefined);
}

/** A configured daimon with its builtin's values filled in; the persona may still be in a file (`personaFile`). */
export function resolveDaimon(d: DaimonConfigEntry): { soul: string; name: string; persona?: string; model?: string; mode: DaimonMode; everyN?: number } {
  const base = d.builtin !== undefined ? builtinDaimons[d.builtin] : undefined;
  const persona = d.persona ?? (d.personaFile === undefined ? base?.persona : undefined);
  const model = d.model ?? base?.model;
  const everyN = d.everyN ?? base?.everyN;
  return {
    soul: d.soul,
    name: d.name ?? base?.name ?? "daimon",
    mode: d.mode ?? base?.mode ?? "whisper",
    ...(persona !== undefined ? { persona } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(everyN !== undefined ? { everyN } : {}),
  };
}

/** The blueprint of a configured soul. */
export function blueprintOf(soul: SoulConfig): SoulBlueprint {
  if (typeof soul.blueprint !== "string") return soul.blueprint;
  const found = builtinSouls[soul.blueprint];
  if (!found) throw new Error(`unknown soul '${soul.blueprint}' (known: ${Object.keys(builtinSouls).join(", ")})`);
  return found;
}
