/**
 * What `startNode` is told. Its own file because the steps of a start (the node's identity,
 * its bus) read these options too, and they must not import the node that calls them.
 */
import type { SoulHostOptions } from "../../actors/soul/index.ts";
import type { Bus } from "../bus/index.ts";
import type { Logger } from "../log/index.ts";
import type { ModelRegistry } from "../providers/index.ts";
import type { StoreOptions } from "../store/index.ts";
import type { ClusterConfig } from "./clusterConfig.ts";
import type { LoadedClusterConfig } from "./loadClusterConfig.ts";
import type { NatsConnectOptions } from "./natsConnection.ts";
import type { Placement } from "./soulPlacement.ts";

export interface StartNodeOptions {
  /** A validated config (`parseClusterConfig`), or a loaded one (`loadClusterConfig`, with daimon personas from files). */
  config: ClusterConfig | LoadedClusterConfig;
  /**
   * This node's name. Default: `local` in a single-process run; on a shared bus, the only
   * node the config names (a config naming several needs it).
   */
  nodeId?: string;
  /** Join a cluster on NATS. Without it (and without `bus`), everything runs in this process. */
  nats?: NatsConnectOptions;
  /** An existing bus to join instead (its cluster must be the config's). The node does not close it. */
  bus?: Bus;
  /**
   * `all`: host every soul of the config (a single-process run; the default without `nats`
   * or `bus`). `assigned`: host the souls assigned to this node (the default on a shared bus).
   */
  placement?: Placement;
  /** Data directory, instead of the config's `data` (default `./.ensoul`). The node's LMDB lives in `<data>/<nodeId>`. */
  data?: string;
  /** LMDB options (`noSync` for tests and benchmarks). */
  store?: Pick<StoreOptions, "noSync" | "durability" | "mapSize" | "turnLog">;
  /** Where provider keys and `bouncer.vaultEnv` values are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** A model registry instead of one built from `env` (tests, benchmarks). */
  registry?: ModelRegistry;
  /**
   * The log the node writes to: warnings and errors it keeps running through, a soul's failed
   * turns, and at `debug` every turn, each line with the node, the soul and the turn's trace.
   * Default: the runtime's root logger (runtime/log: `ENSOUL_LOG_LEVEL`, `--log-level`).
   */
  logger?: Logger;
  /** Instead of `logger`: each warning and error line's text, handed to this function (tests). */
  log?: (line: string) => void;
  /**
   * Count what the node does in Prometheus form (`node.metrics`; runtime/metrics names the
   * series): turns, provider calls, gate decisions, dead letters, budgets, souls and queues.
   */
  metrics?: boolean;
  /**
   * XState's inspect observer (`createInspection(...).inspect`): every soul the node activates,
   * its daimons and the skill gates it serves report there. Stop the node before the inspection.
   */
  inspect?: SoulHostOptions["inspect"];
}
