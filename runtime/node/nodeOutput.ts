/**
 * The step of a node's start that builds the way out of its souls: the config's gates, the
 * cognition its souls and daimons think with (providers, budgets), and each soul's outlet
 * (its gate chain and approval queue in front of the bus), behind one router that also
 * publishes every turn's events, logs them (soulLog.ts) and counts them (with metrics).
 */
import { publishDecisions, type Approvals, type DecisionPublisher, type GateDecision } from "../../actors/gate/index.ts";
import type { Outlet, Soul, SoulEvent } from "../../actors/soul/index.ts";
import type { CognitionContext } from "../cognition/index.ts";
import type { ModelRegistry } from "../providers/index.ts";
import { createBusOutlet, type BusOutlet } from "./busOutlet.ts";
import { buildGate, gatesOf, type BuiltGate, type GateBuildContext } from "./gates.ts";
import { nodeCognition } from "./nodeCognition.ts";
import type { NodeMetrics } from "./nodeMetrics.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodePlan } from "./nodePlan.ts";
import { createSoulBudgets, type BudgetSpentError } from "./soulBudgets.ts";
import { createEventPublisher, type EventPublisher } from "./soulEvents.ts";
import { createSoulLog } from "./soulLog.ts";
import { createSoulOutlets } from "./soulOutlets.ts";
import { createSoulRouter } from "./soulRouter.ts";

/** How many perceptions' senders a node remembers, to say who a soul answered. */
const SENDERS_KEPT = 10_000;

export interface NodeOutput {
  readonly gateContext: GateBuildContext;
  readonly cognition: CognitionContext;
  /** What a daimon of this soul thinks with (its calls charged to the soul's budget). */
  daimonCognition(soulId: string): CognitionContext;
  readonly decisions: DecisionPublisher;
  /** Set when the node serves metrics. */
  readonly metrics?: NodeMetrics;
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
  /** Model tokens a hosted soul spent (its status shows them). */
  spent?(soulId: string, input: number, output: number): void;
  registry?: ModelRegistry;
  metrics?: NodeMetrics;
}

export function buildNodeOutput(plan: NodePlan, { bus, subjects, store }: NodeGround, o: NodeOutputContext): NodeOutput {
  const { config, env, address, report } = plan;
  const { metrics } = o;
  const gateContext: GateBuildContext = { bus, cluster: config.cluster, store, env };
  const built: BuiltGate[] = config.gates.map((spec) => buildGate(spec, gateContext));
  const events = createEventPublisher(bus, subjects, address, report);
  const budgets = createSoulBudgets({
    hosted: plan.hosted,
    store,
    onSpent: (spent) => budgetSpent(plan, events, spent),
    ...(metrics ? { onRefused: metrics.budgetRefused } : {}),
    onError: report,
  });
  const { cognition, forDaimon } = nodeCognition({
    config,
    env,
    ...(o.registry ? { registry: o.registry } : {}),
    budgetsOf: (id) => gatesOf(built, id).filter((b) => b.budget),
    ...(budgets ? { budgets } : {}),
    ...(metrics ? { observe: metrics.modelCall } : {}),
    ...(o.spent ? { spent: o.spent } : {}),
    onError: report,
  });
  const decisions = counted(publishDecisions(bus, config.cluster, { from: address, onError: (err, d) => report(err, `gate decision ${d.decision} of ${d.gate}`) }), metrics);

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
  const logSoulEvent = createSoulLog(plan.logger);
  return {
    gateContext,
    cognition,
    daimonCognition: forDaimon,
    decisions,
    ...(metrics ? { metrics } : {}),
    events,
    busOutlet,
    approvals,
    router,
    onSoulEvent(event) {
      onSoulEvent(event);
      logSoulEvent(event);
      metrics?.soulEvent(event);
    },
    rememberSender(perceptionId, from) {
      senders.set(perceptionId, from);
      if (senders.size > SENDERS_KEPT) senders.delete(senders.keys().next().value as string);
    },
  };
}

/** A soul's budget is spent for this period: said once, as an event on its events subject and a log line. */
function budgetSpent(plan: NodePlan, events: EventPublisher, spent: BudgetSpentError): void {
  events.node(spent.soulId, "budget", { period: spent.period, work: spent.work, reason: spent.message, resumesAt: spent.resumesAt });
  plan.logger.warn({ soul: spent.soulId, period: spent.period, work: spent.work }, spent.message);
}

/** The chains' decisions, published and (with metrics) counted. */
function counted(publish: DecisionPublisher, metrics: NodeMetrics | undefined): DecisionPublisher {
  if (!metrics) return publish;
  const both = ((decision: GateDecision) => {
    metrics.decision(decision);
    publish(decision);
  }) as DecisionPublisher;
  both.flush = () => publish.flush();
  return both;
}
