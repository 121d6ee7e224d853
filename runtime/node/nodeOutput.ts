/**
 * The step of a node's start that builds the way out of its souls: the config's gates, the
 * cognition its souls and daimons think with (providers, budgets), and each soul's outlet
 * (its gate chain and approval queue in front of the bus), behind one router that also
 * publishes every turn's events.
 */
import { publishDecisions, type Approvals, type DecisionPublisher } from "../../actors/gate/index.ts";
import type { Outlet, Soul, SoulEvent } from "../../actors/soul/index.ts";
import type { CognitionContext } from "../cognition/index.ts";
import type { ModelRegistry } from "../providers/index.ts";
import { createBusOutlet, type BusOutlet } from "./busOutlet.ts";
import { buildGate, gatesOf, type BuiltGate, type GateBuildContext } from "./gates.ts";
import { nodeCognition } from "./nodeCognition.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodePlan } from "./nodePlan.ts";
import { createEventPublisher, type EventPublisher } from "./soulEvents.ts";
import { createSoulOutlets } from "./soulOutlets.ts";
import { createSoulRouter } from "./soulRouter.ts";

/** How many perceptions' senders a node remembers, to say who a soul answered. */
const SENDERS_KEPT = 10_000;

export interface NodeOutput {
  readonly gateContext: GateBuildContext;
  readonly cognition: CognitionContext;
  readonly decisions: DecisionPublisher;
  readonly events: EventPublisher;
  readonly busOutlet: BusOutlet;
  /** The approval queues of the souls whose config names approvers. */
  readonly approvals: ReadonlyMap<string, Approvals>;
  /** Every soul's outlet, by the soul that speaks. */
  readonly router: Outlet;
  onSoulEvent(event: SoulEvent): void;
  /** Remembers who sent a perception, for the speech that answers it. */
  rememberSender(perceptionId: string, from: string): void;
}

export interface NodeOutputContext {
  live: ReadonlyMap<string, Soul>;
  /** A soul whose state the registry should show anew. */
  changed(soulId: string): void;
  registry?: ModelRegistry;
}

export function buildNodeOutput(plan: NodePlan, { bus, subjects, store }: NodeGround, o: NodeOutputContext): NodeOutput {
  const { config, env, address, report } = plan;
  const gateContext: GateBuildContext = { bus, cluster: config.cluster, store, env };
  const built: BuiltGate[] = config.gates.map((spec) => buildGate(spec, gateContext));
  const cognition = nodeCognition({ config, env, ...(o.registry ? { registry: o.registry } : {}), budgetsOf: (id) => gatesOf(built, id).filter((b) => b.budget), onError: report });
  const decisions = publishDecisions(bus, config.cluster, { from: address, onError: (err, d) => report(err, `gate decision ${d.decision} of ${d.gate}`) });
  const events = createEventPublisher(bus, subjects, address, report);

  const senders = new Map<string, string>();
  const busOutlet = createBusOutlet({
    bus,
    subjects,
    runningPerception: (id) => o.live.get(id)?.actor.getSnapshot().context.perception?.id,
    senderOf: (perceptionId) => senders.get(perceptionId),
    onError: report,
  });
  const { outlets, approvals } = createSoulOutlets({ hostedConfigs: plan.hostedConfigs, built, busOutlet, decisions, events, approvalsConfig: config.approvals, store });
  const { router, onSoulEvent } = createSoulRouter({ nodeId: plan.nodeId, outlets, events, changed: o.changed });
  return {
    gateContext,
    cognition,
    decisions,
    events,
    busOutlet,
    approvals,
    router,
    onSoulEvent,
    rememberSender(perceptionId, from) {
      senders.set(perceptionId, from);
      if (senders.size > SENDERS_KEPT) senders.delete(senders.keys().next().value as string);
    },
  };
}
