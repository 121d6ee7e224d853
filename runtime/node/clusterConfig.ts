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
import { DEFAULT_TURN_LOG_KEEP } from "../store/index.ts";
import { DEFAULT_SHARED_CONTEXT_LIMITS } from "../bus/index.ts";
import { z } from "zod";
import { DEFAULT_MAX_QUEUED, type SoulBlueprint } from "../../actors/soul/index.ts";
import { DAIMON_MODES, type DaimonMode } from "../../actors/daimon/index.ts";
import { builtinDaimons, builtinSouls } from "../../souls/index.ts";
import { isBlueprint, isSoulPath } from "./soulModule.ts";
import { modelName, token } from "./configFields.ts";
import { ConfigError, formatPath, issueMessage, issuePath } from "./configError.ts";
import { gateSpec, skillGateSchema } from "./gateConfig.ts";
import { soulBudgetSchema } from "./budgetConfig.ts";
import { checkTools, toolSpec } from "./toolConfig.ts";


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
   * Publish speech in chunks while it is produced (default true). A gated soul's chunks are
   * pieces its gate chain has passed, the text so far checked at each sentence end; false:
   * only the final.
   */
  streamChunks: z.boolean().optional(),
  /** Perceptions this soul may keep waiting behind its running turn; default `runtime.maxQueued`. */
  maxQueued: z.number().int().min(1).max(1_000_000).optional(),
  /** Tokens and model calls per hour and day; autonomous work stops at it (budgetConfig.ts). */
  budget: soulBudgetSchema.optional(),
  /** Limits on the soul's `useSoulStore` documents (defaults: runtime/store documents/documentTypes.ts). */
  soulStore: z
    .strictObject({ maxDocuments: z.number().int().positive(), maxBytes: z.number().int().positive(), maxDocumentBytes: z.number().int().positive(), maxKeyLength: z.number().int().positive() })
    .partial()
    .optional(),
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

const bridgeSchema = z.strictObject({
  type: z.enum(["slack", "discord", "terminal", "http"]),
  soul: token,
  node: token.optional(),
  /**
   * A bridge that cannot start (a missing token, a port taken) stops the node's start with
   * its error; an optional one is shown `failed` with the reason, and the node starts without it.
   */
  optional: z.boolean().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

export const DEFAULT_LEASE_MS = 10_000;

const runtimeSchema = z.strictObject({
  /** Node heartbeat period on `ensoul.<cluster>.node.<id>.heartbeat`. */
  heartbeatMs: z.number().int().min(50).default(1_000),
  /** How long a delivered, unacked perception waits before JetStream redelivers it. */
  ackWaitMs: z.number().int().min(200).default(30_000),
  /** Perceptions a node takes in at once (across souls; each soul's stay in order). */
  maxInFlight: z.number().int().min(1).max(10_000).default(256),
  /**
   * Perceptions a soul may keep waiting behind its running turn. Past it the node takes no
   * more of that soul's perceptions until a turn makes room: they stay in the stream, unacked.
   */
  maxQueued: z.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_QUEUED),
  /** Passivate a soul idle this long (0: never). */
  passivateAfterMs: z.number().int().min(0).default(600_000),
  /**
   * The first node dead-letters perceptions for souls no node of this config hosts. Turn it
   * off when processes outside this config host souls in the same cluster.
   */
  deadLetterUnknownSouls: z.boolean().default(true),
  /**
   * The turn log each soul keeps in LMDB, for the debugger's timeline and its revert: the
   * last `keep` turns (0: none), and none older than `maxAgeMs` (the latest is always kept).
   */
  /**
   * Copies JetStream keeps of the cluster stream `ENSOUL_<cluster>` and the shared-context
   * bucket on a clustered NATS (1..5; 3 survives one server down). An existing stream with
   * another count is updated to it when a node starts.
   */
  replicas: z.number().int().min(1).max(5).default(1),
  /**
   * Failover (docs/STORAGE.md "Failover"; on NATS only): each committed turn is also appended
   * to the soul's replicated history in JetStream before its effects are acknowledged, and each
   * soul is owned by one node at a time under a lease. `true`, or `{ leaseMs }`: how long a
   * node's lease outlives its last renewal, the time before another node may take its souls
   * (default 10 s; the same for every node of the cluster). `snapshotEvery`: a soul's owner
   * writes a new snapshot after this many records of its history and removes the older ones
   * (default 1,000; 0: never).
   */
  failover: z
    .union([z.boolean(), z.strictObject({ leaseMs: z.number().int().min(300).max(600_000).default(DEFAULT_LEASE_MS), snapshotEvery: z.number().int().min(0).optional() })])
    .default(false)
    .transform((v): false | { leaseMs: number; snapshotEvery?: number } =>
      v === false ? false : v === true ? { leaseMs: DEFAULT_LEASE_MS } : { leaseMs: v.leaseMs, ...(v.snapshotEvery !== undefined ? { snapshotEvery: v.snapshotEvery } : {}) },
    ),
  turnLog: z.strictObject({ keep: z.number().int().min(0).max(1_000_000).default(DEFAULT_TURN_LOG_KEEP), maxAgeMs: z.number().int().min(1).optional() }).default({ keep: DEFAULT_TURN_LOG_KEEP }),
  /**
   * The shared contexts (`useSharedContext`) a node keeps open, each one watch (on NATS a
   * JetStream consumer): one unused for `idleMs` with no listener is closed, and past `maxOpen`
   * the least recently used one without a listener (runtime/bus sharedContextPool.ts).
   */
  sharedContexts: z
    .strictObject({ idleMs: z.number().int().min(1_000).default(DEFAULT_SHARED_CONTEXT_LIMITS.idleMs), maxOpen: z.number().int().min(1).max(1_000_000).default(DEFAULT_SHARED_CONTEXT_LIMITS.maxOpen) })
    .default({ ...DEFAULT_SHARED_CONTEXT_LIMITS }),
});

export const clusterConfigSchema = z
  .strictObject({
    /** The cluster namespace: `ensoul.<cluster>.*`, stream `ENSOUL_<cluster>`. */
    cluster: token.default("local"),
    /** The data directory; each node keeps its LMDB environment in `<data>/<node>`. */
    data: z.string().min(1).optional(),
    /** The nodes, first one first: it hosts unassigned souls and reports unknown souls. */
    nodes: z.array(token).min(1).optional(),
    /**
     * Where souls that name no `node` run. `static` (default): on the first node. `auto`: spread
     * over the live nodes by rendezvous hashing, moved when a node joins or leaves, with their
     * replicated history (failover is on; `nodes` may be left out: any node that starts with
     * `--node <name>` joins and takes its share). docs/STORAGE.md, "Failover and placement".
     */
    placement: z.enum(["static", "auto"]).default("static"),
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
    /** Tools the souls may call (toolConfig.ts, docs/PROTOCOL.md §14). */
    tools: z.array(toolSpec).default([]),
    /** Who may approve or deny held proposals (with `approve`/`deny` perceptions). */
    approvals: z.strictObject({ authorizedUsers: z.array(z.string().min(1)).min(1) }).optional(),
    /** Reserved: validated, not started yet. */
    bridges: z.array(bridgeSchema).default([]),
    runtime: runtimeSchema.default({ heartbeatMs: 1_000, ackWaitMs: 30_000, maxInFlight: 256, maxQueued: DEFAULT_MAX_QUEUED, passivateAfterMs: 600_000, deadLetterUnknownSouls: true, replicas: 1, failover: false, turnLog: { keep: DEFAULT_TURN_LOG_KEEP }, sharedContexts: { ...DEFAULT_SHARED_CONTEXT_LIMITS } }),
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
  // By map, not indexOf: a config of 100,000 souls took 10 s to check.
  const firstIndex = new Map<string, number>();
  ids.forEach((id, i) => firstIndex.has(id) || firstIndex.set(id, i));
  const listed = `souls in this config: ${ids.join(", ")}`;
  const nodes = config.nodes ? new Set(config.nodes) : null;
  const nodeList = config.nodes?.join(", ") ?? "";

  config.nodes?.forEach((n, i) => {
    if (config.nodes!.indexOf(n) !== i) issue(["nodes", i], `duplicate node '${n}'`);
  });
  config.souls.forEach((soul, i) => {
    if (firstIndex.get(soul.id) !== i) issue(["souls", i, "id"], `duplicate soul id '${soul.id}'`);
    if (typeof soul.blueprint === "string" && !Object.hasOwn(builtinSouls, soul.blueprint)) {
      issue(
        ["souls", i, "blueprint"],
        isSoulPath(soul.blueprint)
          ? `'${soul.blueprint}' is a path: a soul from a path is loaded when the config is read from a file (loadClusterConfig, ensoul up)`
          : `unknown soul '${soul.blueprint}' (builtin: ${Object.keys(builtinSouls).join(", ")}; your own soul: a path such as ./souls/${soul.blueprint})`,
      );
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
  checkTools(config.tools, nodes, known, issue);
  for (const id of Object.keys(config.providers.souls ?? {})) {
    if (!known.has(id)) issue(["providers", "souls", id], `unknown soul '${id}' (${listed})`);
  }
  config.bridges.forEach((b, i) => {
    if (!known.has(b.soul)) issue(["bridges", i, "soul"], `unknown soul '${b.soul}' (${listed})`);
  });
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
