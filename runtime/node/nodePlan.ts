/**
 * The first step of a node's start: what it is and what it hosts, decided from the options
 * and the cluster config before anything is opened. Every later step reads the plan.
 */
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import { lineLogger, redactSecrets, rootLogger, type Logger } from "../log/index.ts";
import { blueprintOf, parseClusterConfig, type ClusterConfig, type SoulConfig } from "./clusterConfig.ts";
import type { LoadedClusterConfig } from "./loadClusterConfig.ts";
import { resolveNodeId } from "./nodeIdentity.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";
import { firstNode, soulsFor, type Placement } from "./soulPlacement.ts";

export type ReportError = (err: unknown, what: string) => void;

export interface NodePlan {
  readonly loaded: LoadedClusterConfig;
  readonly config: ClusterConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly placement: Placement;
  readonly nodeId: string;
  /** The node's address as a sender (`node-<id>`). */
  readonly address: string;
  /** The node's log (`{ node }` bound): a soul's lines are its children (soulLog.ts). */
  readonly logger: Logger;
  /** A warning the node keeps running through. */
  readonly log: (line: string) => void;
  /** A line of normal operation (a bridge started): the log at `info`. */
  readonly info: (line: string) => void;
  /** An error the node keeps running through, and what it was doing. */
  readonly report: ReportError;
  /** The souls this node hosts, in config order, and by id. */
  readonly hostedConfigs: readonly SoulConfig[];
  readonly hosted: ReadonlyMap<string, SoulConfig>;
  /** Every soul of the cluster, wherever it runs. */
  readonly known: ReadonlySet<string>;
  readonly blueprints: ReadonlyMap<string, SoulBlueprint>;
  /** Whether this node dead-letters perceptions and whispers for souls no node hosts (one node per cluster does). */
  readonly reportsUnknown: boolean;
  /** Perceptions come from a JetStream consumer that redelivers until acked, so a soul may hold one unwritten. */
  readonly onJetStream: boolean;
}

export function planNode(options: StartNodeOptions): NodePlan {
  const loaded: LoadedClusterConfig =
    "personas" in options.config ? options.config : { config: parseClusterConfig(options.config), file: "cluster config", baseDir: process.cwd(), personas: new Map() };
  const config = loaded.config;
  const placement: Placement = options.placement ?? (options.nats || options.bus ? "assigned" : "all");
  const nodeId = resolveNodeId(options, config, placement);
  const logger = (options.logger ?? (options.log ? lineLogger(options.log) : rootLogger())).child({ node: nodeId });
  // No credential leaves in a log line, whatever it quotes (a NATS error with a URL in it):
  // ensoul's log redacts every line it prints, and a caller's own logger gets redacted text.
  const log = (line: string) => logger.warn(redactSecrets(line));
  const hostedConfigs = soulsFor(config, nodeId, placement);
  return {
    loaded,
    config,
    env: options.env ?? process.env,
    placement,
    nodeId,
    address: `node-${nodeId}`,
    logger,
    log,
    info: (line: string) => logger.info(redactSecrets(line)),
    report: (err, what) => logger.error(redactSecrets(`${what}: ${err instanceof Error ? err.message : String(err)}`)),
    hostedConfigs,
    hosted: new Map(hostedConfigs.map((s) => [s.id, s])),
    known: new Set(config.souls.map((s) => s.id)),
    blueprints: new Map(config.souls.map((s) => [s.id, blueprintOf(s)])),
    // Under automatic placement with no nodes listed no node is "first": unknown souls are then not reported.
    reportsUnknown: config.runtime.deadLetterUnknownSouls && (placement === "all" || (config.placement === "auto" && !config.nodes ? false : nodeId === firstNode(config, nodeId))),
    onJetStream: options.nats !== undefined && options.bus === undefined,
  };
}
