/**
 * The step of a node's start that makes its souls outlive the machine (`runtime.failover`,
 * `placement: auto`; docs/STORAGE.md "Failover and placement"): the node's lease, held before
 * any soul runs; under automatic placement, which souls the live nodes give it; and, once the
 * souls are hosted, their moves when the live nodes change.
 */
import type { SoulHost } from "../../actors/soul/index.ts";
import { followOwnership, startNodeFailover, startSoulOwnership, type NodeFailover, type SoulOwnership } from "./failover/index.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodePlan } from "./nodePlan.ts";
import { failoverOf } from "./soulPlacement.ts";

/** How far before a moved soul's last record its missed perceptions are looked for (a perception waits in a soul's queue far less). */
const REPLAY_MARGIN_MS = 120_000;

export interface FailoverStep {
  failover: NodeFailover | undefined;
  ownership: SoulOwnership | undefined;
  /** Once the souls are hosted: under automatic placement they move as the live nodes change. */
  follow(host: SoulHost): { stop(): void } | undefined;
}

export async function startFailoverStep(plan: NodePlan, ground: NodeGround, cleanups: (() => Promise<void>)[]): Promise<FailoverStep> {
  const { config, nodeId, report } = plan;
  const { bus, store } = ground;
  const settings = plan.placement === "assigned" ? failoverOf(config) : false;
  if (!settings) return { failover: undefined, ownership: undefined, follow: () => undefined };
  const auto = config.placement === "auto";
  const failover = await startNodeFailover({
    bus,
    store,
    nodeId,
    leaseMs: settings.leaseMs,
    ...(config.runtime.failover && config.runtime.failover.snapshotEvery !== undefined ? { snapshotEvery: config.runtime.failover.snapshotEvery } : {}),
    log: plan.log,
    ...(auto ? { moves: { subjects: ground.subjects, replayMarginMs: REPLAY_MARGIN_MS } } : {}),
  });
  cleanups.push(() => failover.release());
  // Nodes read the live set every third of the lease time: a lapsed node is noticed within a lease and a third.
  const pollMs = Math.max(100, Math.floor(settings.leaseMs / 3));
  const ownership = auto ? await startSoulOwnership({ nodeId, souls: plan.hostedConfigs, leases: failover.leases, pollMs, report }) : undefined;
  cleanups.push(async () => ownership?.stop());
  return {
    failover,
    ownership,
    follow(host) {
      if (!ownership) return undefined;
      const moves = followOwnership({ nodeId, ownership, failover, host, store, log: plan.log, report }, [...plan.hosted.keys()], pollMs);
      cleanups.push(async () => moves.stop());
      return moves;
    },
  };
}
