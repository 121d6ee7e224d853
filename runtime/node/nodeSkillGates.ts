/**
 * The skill-gate actors a node serves (config `skillGates` placed on it), started and
 * confirmed (servedSubscriptions.ts): unconfirmed, every verify request of a refused skill
 * would go unanswered and the proposals waiting on it, anywhere in the cluster, fail closed.
 */
import { startSkillGate, type SkillGateHandle, type SkillGateOptions } from "../../actors/gate/index.ts";
import { confirmServed } from "./servedSubscriptions.ts";
import type { Bus } from "../bus/index.ts";
import type { ClusterConfig } from "./clusterConfig.ts";
import { buildLocalGate, type GateBuildContext } from "./gates.ts";
import type { NodeRegistry } from "./nodeRegistry.ts";
import { servesSkill, type Placement } from "./soulPlacement.ts";

export interface NodeSkillGatesOptions {
  bus: Bus;
  config: ClusterConfig;
  nodeId: string;
  placement: Placement;
  gateContext: GateBuildContext;
  registry: NodeRegistry;
  inspect?: SkillGateOptions["inspect"];
}

export async function startNodeSkillGates(o: NodeSkillGatesOptions): Promise<SkillGateHandle[]> {
  const handles: SkillGateHandle[] = [];
  for (const g of o.config.skillGates) {
    if (!servesSkill(g, o.nodeId, o.placement)) continue;
    handles.push(
      startSkillGate({
        bus: o.bus,
        cluster: o.config.cluster,
        gate: buildLocalGate(g.gate, o.gateContext).gate,
        skill: g.skill,
        ...(g.deadlineMs !== undefined ? { deadlineMs: g.deadlineMs } : {}),
        ...(o.inspect ? { inspect: o.inspect } : {}),
      }),
    );
  }
  await confirmServed(handles, (h) => ({ what: `skill gate '${h.skill}'`, queue: h.skill, grant: `skills=${h.skill}` }), o.nodeId);
  for (const h of handles) o.registry.trigger.skillGateSet({ skill: h.skill, serving: true });
  return handles;
}
