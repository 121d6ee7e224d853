/**
 * The services a node gives its souls' hooks (actors/soul SoulServices.ts): each one built
 * here from what the node has (its bus, its store, its config), one line per service.
 */
import type { SoulServices, SoulServicesOf } from "../../actors/soul/index.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodeOutput } from "./nodeOutput.ts";
import type { NodePlan } from "./nodePlan.ts";

export function nodeSoulServices(_plan: NodePlan, _ground: NodeGround, _output: NodeOutput): SoulServicesOf {
  const shared: SoulServices = {};
  return () => shared;
}
