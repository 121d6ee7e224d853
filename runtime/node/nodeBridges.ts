/**
 * The step of a node's start that runs its bridges: each `bridges` entry of the config that
 * names this node, or whose soul it hosts, started once the souls can answer. A bridge
 * that cannot run (a missing token, a port taken, a platform refusing the token) is reported
 * and shown `failed` in the registry; the node and its other bridges go on.
 */
import { bridgeName, EMPTY_COUNTERS, startBridge, type BridgeHandle, type BridgeStatus } from "../../bridges/index.ts";
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

export async function startNodeBridges(plan: NodePlan, { bus, subjects, store }: NodeGround, o: { registry: NodeRegistry; daimons: NodeDaimons; inspect?: StartNodeOptions["inspect"] }): Promise<NodeBridges> {
  const handles: BridgeHandle[] = [];
  const names = new Set<string>();
  const watching: (() => void)[] = [];
  for (const entry of placedHere(plan)) {
    const name = bridgeName(entry);
    const failed = (error: string): BridgeStatus => ({ name, type: entry.type, soul: entry.soul, state: "failed", counters: { ...EMPTY_COUNTERS }, lastError: error });
    if (names.has(name)) {
      const error = `two bridges are named '${name}' on node ${plan.nodeId}: give one options.name`;
      plan.log(error);
      o.registry.trigger.bridgeSet({ bridge: failed(error) });
      continue;
    }
    names.add(name);
    try {
      const whisper = o.daimons.whisperFor(entry.soul);
      const handle = await startBridge({
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
      handles.push(handle);
      const show = () => o.registry.trigger.bridgeSet({ bridge: handle.status() });
      show();
      const sub = handle.runtime.actor.subscribe(show);
      watching.push(() => sub.unsubscribe());
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      plan.log(`bridge ${name} not started: ${error}`);
      o.registry.trigger.bridgeSet({ bridge: failed(error) });
    }
  }
  return {
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
}
