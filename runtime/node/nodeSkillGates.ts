/**
 * The skill-gate actors a node serves (config `skillGates` placed on it), started and
 * confirmed. NATS refuses a subscription the node's user may not make only after the fact,
 * with a permissions violation following the SUB; a node that did not wait for the server's
 * answer would say it is ready while every verify request of that skill went unanswered, and
 * the proposals waiting on it, anywhere in the cluster, failed closed. So the node waits, and
 * a refused skill gate stops it from starting, with the reason and what to change.
 */
import { startSkillGate, type SkillGateHandle, type SkillGateOptions } from "../../actors/gate/index.ts";
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
  const outcomes = await Promise.allSettled(handles.map((h) => h.ready()));
  const refused = outcomes.findIndex((r) => r.status === "rejected");
  if (refused >= 0) {
    await Promise.allSettled(handles.map((h) => h.stop()));
    const { skill, subject } = handles[refused] as SkillGateHandle;
    const reason = (outcomes[refused] as PromiseRejectedResult).reason;
    throw new Error(
      `node ${o.nodeId} cannot serve skill gate '${skill}': ${reason instanceof Error ? reason.message : String(reason)}; ` +
        `its NATS user needs permission to subscribe to ${subject} in queue group '${skill}' ` +
        `(\`ensoul nats-config --user <user>:role=node:skills=${skill}\` grants it)`,
    );
  }
  for (const h of handles) o.registry.trigger.skillGateSet({ skill: h.skill, serving: true });
  return handles;
}
