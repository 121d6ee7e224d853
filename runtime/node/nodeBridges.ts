/**
 * The step of a node's start that runs its bridges: each `bridges` entry of the config that
 * names this node, or whose soul it hosts, started once the souls can answer.
 *
 * A bridge that cannot run (a missing token, a port taken, a platform refusing the token)
 * stops the start with its error, the bridges started before it stopped: a node that said
 * `ready` with nobody listening where the config puts the soul would fail its users quietly
 * (a skill gate without its grant stops the start the same way). A bridge the config marks
 * `optional: true` is reported and shown `failed` in the registry instead; the node and its
 * other bridges go on.
 */
import { bridgeName, EMPTY_COUNTERS, startBridge, type BridgeHandle, type BridgeStatus } from "../../bridges/index.ts";
import type { BridgeConfig } from "./clusterConfig.ts";
import type { NodeDaimons } from "./daimons.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodePlan } from "./nodePlan.ts";
import type { NodeRegistry } from "./nodeRegistry.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";
import { stopEach } from "./nodeShutdown.ts";

export interface NodeBridges {
  readonly handles: readonly BridgeHandle[];
  /** No new platform messages; speech still goes out until `stop`. */
  closeIntake(): void;
  stop(): Promise<void>;
}

/**
 * The entries this node runs: the one it names, else those of the souls it hosts. A bridge
 * talks to its soul through the bus, so it may run on any node (one with the platform's
 * network access, say).
 */
function placedHere({ config, hosted, nodeId, placement }: NodePlan) {
  return config.bridges.filter((b) => placement === "all" || (b.node !== undefined ? b.node === nodeId : hosted.has(b.soul)));
}

/** A bridge that could not start and is not optional: the node does not start. */
export class BridgeStartError extends Error {
  constructor(entry: BridgeConfig, name: string, reason: string) {
    super(`bridge ${name} (${entry.type}, soul ${entry.soul}) cannot start: ${reason}; mark it optional: true in the config to start without it`);
    this.name = "BridgeStartError";
  }
}

type BridgeStartOptions = { registry: NodeRegistry; daimons: NodeDaimons; inspect?: StartNodeOptions["inspect"] };

function startOne(plan: NodePlan, { bus, subjects, store }: NodeGround, entry: BridgeConfig, name: string, o: BridgeStartOptions): Promise<BridgeHandle> {
  const whisper = o.daimons.whisperFor(entry.soul);
  return startBridge({
    entry,
    name,
    bus,
    subjects,
    store,
    env: plan.env,
    soulName: plan.blueprints.get(entry.soul)?.name ?? entry.soul,
    report: plan.report,
    log: plan.log,
    info: plan.info,
    ...(o.inspect ? { inspect: o.inspect } : {}),
    ...(whisper ? { whisper } : {}),
  });
}

export async function startNodeBridges(plan: NodePlan, ground: NodeGround, o: BridgeStartOptions): Promise<NodeBridges> {
  const handles: BridgeHandle[] = [];
  const names = new Set<string>();
  const watching: (() => void)[] = [];
  const bridges: NodeBridges = {
    handles,
    closeIntake() {
      for (const h of handles) h.runtime.closeIntake();
    },
    async stop() {
      await stopEach(handles, (h) => h.stop(), (h) => `bridge ${h.name}`);
      for (const stop of watching) stop();
      for (const h of handles) o.registry.trigger.bridgeSet({ bridge: h.status() });
    },
  };
  for (const entry of placedHere(plan)) {
    const name = bridgeName(entry);
    try {
      if (names.has(name)) throw new Error(`two bridges are named '${name}' on node ${plan.nodeId}: give one options.name`);
      names.add(name);
      const handle = await startOne(plan, ground, entry, name, o);
      handles.push(handle);
      const show = () => o.registry.trigger.bridgeSet({ bridge: handle.status() });
      show();
      const sub = handle.runtime.actor.subscribe(show);
      watching.push(() => sub.unsubscribe());
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (entry.optional !== true) {
        // Nothing of this start stays running: the bridges already up are stopped before the node gives up.
        await bridges.stop().catch(() => undefined);
        throw new BridgeStartError(entry, name, error);
      }
      plan.log(`optional bridge ${name} not started: ${error}`);
      const failed: BridgeStatus = { name, type: entry.type, soul: entry.soul, state: "failed", counters: { ...EMPTY_COUNTERS }, lastError: error };
      o.registry.trigger.bridgeSet({ bridge: failed });
    }
  }
  return bridges;
}
