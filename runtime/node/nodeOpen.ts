/**
 * The second step of a node's start: the bus it joins and the LMDB environment it opens
 * (`<data>/<nodeId>`). On a shared bus it first makes sure no live node already answers to
 * its name. What it opened it closes again if a later step fails.
 */
import { clusterSubjects, type Bus, type ClusterSubjects } from "../bus/index.ts";
import { openStore, type Store } from "../store/index.ts";
import { nodeDataDir } from "./dataDirectory.ts";
import { joinBus } from "./nodeBus.ts";
import { runningTwin } from "./nodeIdentity.ts";
import type { NodePlan } from "./nodePlan.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";

export interface NodeGround {
  readonly bus: Bus;
  /** The node opened the bus, so it drains and closes it (a bus it was given is not its to close). */
  readonly ownsBus: boolean;
  readonly subjects: ClusterSubjects;
  readonly store: Store;
}

export async function openNodeGround(options: StartNodeOptions, plan: NodePlan): Promise<NodeGround> {
  const { config, nodeId } = plan;
  const ownsBus = options.bus === undefined;
  const bus: Bus = await joinBus(options, config, nodeId, plan.report);
  const subjects = clusterSubjects(config.cluster);
  try {
    if (plan.placement === "assigned") {
      // Two processes claiming one node would both host its souls: refuse to be the second.
      const running = await runningTwin(bus, subjects, nodeId);
      if (running) throw new Error(`node '${nodeId}' of cluster '${config.cluster}' is already running (pid ${running.pid}); stop it first or start this one with another --node`);
    }
    const store = openStore({ path: nodeDataDir(options.data ?? config.data, nodeId), turnLog: config.runtime.turnLog, ...options.store });
    return { bus, ownsBus, subjects, store };
  } catch (err) {
    if (ownsBus) await bus.close().catch(() => undefined);
    throw err;
  }
}

/** Closes what `openNodeGround` opened, after a failed start. */
export async function closeNodeGround({ bus, ownsBus, store }: NodeGround): Promise<void> {
  await store.close().catch(() => undefined);
  if (ownsBus) await bus.close().catch(() => undefined);
}
