/**
 * Each hosted soul's outlet: straight to the bus for a soul without gates, else behind its gate
 * chain and (when the config names approvers) its approval queue.
 *
 * It exists apart from the node's assembly because wiring a soul's gates (chain, approvals,
 * chunk streaming, blocked events) is decided once per soul at start, from the config.
 */
import { createApprovals, createGateChain, gatedOutlet, type Approvals, type DecisionPublisher } from "../../actors/gate/index.ts";
import type { Outlet } from "../../actors/soul/index.ts";
import type { Store } from "../store/index.ts";
import type { BusOutlet } from "./busOutlet.ts";
import type { ClusterConfig, SoulConfig } from "./clusterConfig.ts";
import { gatesOf, type BuiltGate } from "./gates.ts";
import type { EventPublisher } from "./soulEvents.ts";

export interface SoulOutletsContext {
  hostedConfigs: readonly SoulConfig[];
  built: readonly BuiltGate[];
  busOutlet: BusOutlet;
  decisions: DecisionPublisher;
  events: EventPublisher;
  approvalsConfig: ClusterConfig["approvals"];
  store: Store;
}

/** The outlets by soul id, and the approval queues of the souls that have one. */
export function createSoulOutlets({ hostedConfigs, built, busOutlet, decisions, events, approvalsConfig, store }: SoulOutletsContext): {
  outlets: Map<string, Outlet>;
  approvals: Map<string, Approvals>;
} {
  const outlets = new Map<string, Outlet>();
  const approvals = new Map<string, Approvals>();
  for (const soul of hostedConfigs) {
    const gates = gatesOf(built, soul.id).map((b) => b.gate);
    if (gates.length === 0) {
      outlets.set(soul.id, soul.streamChunks === false ? { deliver: (p) => busOutlet.deliver(p) } : busOutlet);
      continue;
    }
    const chain = createGateChain(gates, { onDecision: decisions });
    const queue = approvalsConfig
      ? createApprovals({ kv: store.kv(soul.id, "gate-approvals"), authorizedUsers: approvalsConfig.authorizedUsers, onDecision: decisions })
      : undefined;
    if (queue) approvals.set(soul.id, queue);
    outlets.set(
      soul.id,
      gatedOutlet(busOutlet, chain, {
        ...(queue ? { approvals: queue } : {}),
        // Verified pieces only (actors/gate/verifiedStream.ts), so streaming is safe by default.
        streamChunks: soul.streamChunks ?? true,
        onBlocked: (p, result) => events.node(p.soulId, "blocked", { proposalId: p.id, gate: result.gate, decision: result.decision, reason: result.interception.reason }, p.causation),
      }),
    );
  }
  return { outlets, approvals };
}
