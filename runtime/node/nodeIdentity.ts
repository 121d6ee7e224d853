/**
 * Which node this process is: the name it was given, or the one the config implies, and the
 * check that no live node already answers to it.
 *
 * It exists apart from the node's assembly because naming a node (and refusing to be the
 * second process claiming one) is decided before anything is opened.
 */
import { assertName, type Bus, type ClusterSubjects } from "../bus/index.ts";
import type { ClusterConfig } from "./clusterConfig.ts";
import { LOCAL_NODE } from "./dataDirectory.ts";
import { decodeControl, encodeControl, isControlError, type NodeStatus } from "./controlProtocol.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";
import { firstNode, type Placement } from "./soulPlacement.ts";

/** The status of a live node with this id, if one answers. */
export async function runningTwin(bus: Bus, subjects: ClusterSubjects, nodeId: string): Promise<NodeStatus | undefined> {
  try {
    const reply = decodeControl<NodeStatus>(await bus.request(subjects.node(nodeId, "status"), encodeControl({}), { timeoutMs: 500 }));
    return isControlError(reply) ? undefined : reply;
  } catch {
    // No responders (the usual answer), or a timeout: nobody is running as this node.
    return undefined;
  }
}

export function resolveNodeId(options: StartNodeOptions, config: ClusterConfig, placement: Placement): string {
  if (options.nodeId !== undefined) return assertName("nodeId", options.nodeId);
  if (placement === "all") return LOCAL_NODE;
  if (config.placement === "auto" && !config.nodes) throw new Error("with placement: auto and no nodes listed, every node says its name: start it with --node <name>");
  const named = new Set([...(config.nodes ?? []), ...config.souls.flatMap((s) => (s.node ? [s.node] : []))]);
  if (named.size > 1) throw new Error(`this config spreads souls over nodes ${[...named].join(", ")}: say which one this is (--node <name>)`);
  return firstNode(config, "main");
}
