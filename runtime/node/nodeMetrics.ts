/**
 * A node's metrics (`startNode({ metrics: true })`, `ensoul up --metrics`): the Prometheus
 * set of runtime/metrics fed from what the node already sees. Turns and failures from its
 * souls' events, model calls from its watched model registry (observedModels.ts), gate
 * decisions from its chains, dead letters from the bus (by category, never their text),
 * budget refusals from the souls' budgets; souls, queues and perception totals are read from
 * the node's registry when scraped.
 *
 * It is loaded only for a node that serves metrics (Node.ts imports it on demand), so a
 * node without them never loads prom-client.
 */
import type { GateDecision } from "../../actors/gate/index.ts";
import type { SoulEvent } from "../../actors/soul/index.ts";
import { deadLetterCategory, observeDeadLetters, type Bus } from "../bus/index.ts";
import { createEnsoulMetrics, type MetricsSource } from "../metrics/index.ts";
import type { ModelCall } from "./observedModels.ts";
import type { NodePlan } from "./nodePlan.ts";
import type { RegistryContext } from "./nodeRegistry.ts";
import type { NodeRegistryStep } from "./registryFeed.ts";

export interface NodeMetrics extends MetricsSource {
  soulEvent(event: SoulEvent): void;
  decision(decision: GateDecision): void;
  modelCall(call: ModelCall): void;
  budgetRefused(soulId: string, work: string): void;
  /** Stops counting this node's dead letters. */
  stop(): void;
}

export type CreateNodeMetrics = typeof createNodeMetrics;

/**
 * The node's totals, its bridges' duplicates among them: a platform's repeat a bridge drops
 * itself (an HTTP Idempotency-Key sent again, a Slack retry) never reaches the node's intake,
 * yet it is a perception dropped as a duplicate all the same.
 */
function countersWithBridges(ctx: RegistryContext): RegistryContext["counters"] {
  const bridged = Object.values(ctx.bridges).reduce((n, b) => n + (b.counters["duplicates"] ?? 0), 0);
  return { ...ctx.counters, duplicates: ctx.counters.duplicates + bridged };
}

export function createNodeMetrics(plan: NodePlan, feed: NodeRegistryStep, bus: Bus): NodeMetrics {
  const context = () => feed.registry.getSnapshot().context;
  const metrics = createEnsoulMetrics(
    {
      souls() {
        // The registry is patched in batches; a scrape sees the souls as they are now.
        feed.flush(true);
        return [...context().souls.values()];
      },
      counters: () => countersWithBridges(context()),
    },
    { node: plan.nodeId, cluster: plan.config.cluster },
  );
  const unobserve = observeDeadLetters((from, letter) => {
    if (from === bus) metrics.deadLetter(deadLetterCategory(letter.reason));
  });
  return {
    text: () => metrics.text(),
    contentType: metrics.contentType,
    soulEvent(event) {
      if (event.type === "turn") metrics.turn(event.soulId, event.process, event.durationMs);
      else if (event.type === "error") metrics.turnFailed(event.soulId, event.phase);
    },
    decision: (d) => metrics.gateDecision(d.soulId, d.gate, d.decision, d.phase ?? "review"),
    modelCall: (call) =>
      metrics.providerCall({
        provider: call.provider,
        model: call.model,
        durationMs: call.durationMs,
        ...(call.usage ? { inputTokens: call.usage.inputTokens, outputTokens: call.usage.outputTokens } : {}),
        ...(call.failure !== undefined ? { failure: call.failure } : {}),
      }),
    budgetRefused: (soulId, work) => metrics.budgetRefused(soulId, work),
    stop: unobserve,
  };
}
