/**
 * The step of a node's start that hosts its souls: the soul host that activates them from
 * LMDB on demand and passivates the idle ones, the souls with work left from the last run
 * brought back first, and the gate to every soul that closes when the node stops.
 */
import { nodeSoulServices } from "./nodeServices.ts";
import { createSoulHost, type Soul, type SoulHost, type SoulHostOptions } from "../../actors/soul/index.ts";
import { LeaseHeldError } from "../bus/index.ts";
import { openSouls, type NodeFailover, type SoulOwnership } from "./failover/index.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodeOutput } from "./nodeOutput.ts";
import type { NodePlan } from "./nodePlan.ts";
import type { NodeRegistryStep } from "./registryFeed.ts";
import { superviseSouls, type SoulSupervision } from "./soulSupervision.ts";

export interface NodeSouls {
  readonly host: SoulHost;
  /** The live soul (activated if it was passivated); rejects for a soul not hosted here, or once the node stops. */
  soulOf(id: string): Promise<Soul>;
  /** This node runs the soul now (its config places it here, or automatic placement does). */
  owns(id: string): boolean;
  /** Brings back the souls with work left in LMDB, and resumes their approved proposals. */
  resumeLeftovers(): Promise<void>;
  /** No soul is handed out from now on, idle souls are no longer passivated, and none is restarted. */
  closeDoors(): void;
  /** The souls as supervised actors (soulSupervision.ts). */
  readonly supervision: SoulSupervision;
}

export function hostNodeSouls(
  plan: NodePlan,
  ground: NodeGround,
  feed: NodeRegistryStep,
  output: NodeOutput,
  inspect?: SoulHostOptions["inspect"],
  failover?: NodeFailover,
  ownership?: SoulOwnership,
): NodeSouls {
  const { store } = ground;
  const { nodeId, hosted, blueprints, hostedConfigs, config, report } = plan;
  const { live, activations, dirty } = feed;
  // Under automatic placement the live nodes decide which of the souls that may run here do.
  const owns = (id: string) => hosted.has(id) && (ownership ? ownership.owns(id) : true);
  const supervision = superviseSouls(() => host, { events: output.events, report });
  const host = createSoulHost({
    // Under failover each soul's store also replicates its turns, once its lease is taken (prepare).
    ...(failover ? { store: (id: string) => failover.storeOf(id), prepare: (id: string) => failover.prepare(id) } : { store }),
    blueprint: (id) => {
      const bp = blueprints.get(id);
      if (!bp || !hosted.has(id)) throw new Error(`soul '${id}' is not hosted on node ${nodeId}`);
      return bp;
    },
    outlet: output.router,
    cognition: output.cognition,
    maxQueued: (id) => hosted.get(id)?.maxQueued ?? config.runtime.maxQueued,
    services: nodeSoulServices(plan, ground, output),
    ...(inspect ? { inspect } : {}),
    onActivate: (soul) => {
      supervision.watch(soul);
      live.set(soul.id, soul);
      soul.onEvent((event) => output.onSoulEvent(event));
      // Counted now, shown with the next flush: a node activating a thousand souls must not copy the registry a thousand times.
      activations.set(soul.id, (activations.get(soul.id) ?? 0) + 1);
      dirty.add(soul.id);
    },
  });
  let stopping = false;

  const { passivateAfterMs } = config.runtime;
  const passivator =
    passivateAfterMs > 0
      ? setInterval(() => {
          host
            .passivateIdle(passivateAfterMs)
            .then(feed.markPassivated)
            .catch((err: unknown) => report(err, "passivating idle souls"));
        }, Math.min(30_000, Math.max(50, Math.floor(passivateAfterMs / 2))))
      : undefined;
  passivator?.unref();

  // Activated in its own scope: what its restore and replay start is the soul's.
  const activated = (id: string) => supervision.within(id, () => host.get(id)).then((soul) => supervision.scoped(soul));
  return {
    host,
    owns,
    supervision,
    async soulOf(id) {
      if (!owns(id)) throw new Error(`soul '${id}' is not hosted on node ${nodeId}`);
      if (stopping) throw new Error(`node ${nodeId} is stopping`);
      if (ownership) return activated(id);
      // Under static placement nothing reads a passed-by perception back (that is automatic
      // placement's move, failover/missedPerceptions.ts): a soul whose lease another live node
      // holds (a config that moved it, not yet restarted there) fails plainly, so the
      // perception comes back later instead of being passed by.
      return activated(id).catch((err: unknown) => {
        throw err instanceof LeaseHeldError ? new Error(err.message) : err;
      });
    },
    async resumeLeftovers() {
      // Under failover every soul's copy is brought up to its replicated history first: a node
      // on a fresh machine then holds, and shows, each soul as it was committed anywhere.
      // (Under automatic placement the souls still held elsewhere are opened when let go: soulMoves.ts.)
      if (failover) await openSouls(failover, hostedConfigs.map((s) => s.id).filter(owns), plan.log);
      // Souls with work left from the last run come back first: what was in their inbox
      // arrived before anything the consumer will deliver now.
      for (const soul of hostedConfigs) {
        if (!owns(soul.id)) continue;
        const actor = store.actor(soul.id);
        if (actor.pendingInbox().length || actor.pendingOutbox().length || actor.schedules().length) await activated(soul.id);
      }
      for (const queue of output.approvals.values()) void queue.resume().catch((err: unknown) => report(err, "resuming approved proposals"));
    },
    closeDoors() {
      stopping = true;
      supervision.stop();
      if (passivator) clearInterval(passivator);
    },
  };
}
