/**
 * The services a node gives its souls' hooks (actors/soul SoulServices.ts): each one built
 * here from what the node has (its bus, its store, its config), one line per service.
 */
import type { SoulServices, SoulServicesOf } from "../../actors/soul/index.ts";
import { createEphemeralPublisher } from "./ephemeralEvents.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodeOutput } from "./nodeOutput.ts";
import type { NodePlan } from "./nodePlan.ts";

export function nodeSoulServices(plan: NodePlan, ground: NodeGround, _output: NodeOutput): SoulServicesOf {
  const sharedContext = ground.bus.sharedKv?.();
  const shared: SoulServices = {
    ephemeral: createEphemeralPublisher(ground.bus, ground.subjects, plan.report),
    ...(sharedContext ? { sharedContext } : {}),
  };
  return () => shared;
}
