import type { Bus } from "../../runtime/bus/index.ts";
import { encodeEnvelope, makeEnvelope } from "../../runtime/bus/index.ts";
import { clusterSubjects } from "../../runtime/bus/index.ts";
import { componentLogger } from "../../runtime/log/index.ts";
import { errorMessage } from "./errors.ts";
import type { GateDecision } from "./Gate.ts";

/** The `type` of the event envelope that carries a gate decision. */
export const GATE_DECISION_EVENT = "gate.decision";

/** The `data` of a `gate.decision` event, as a debugger or daimon reads it. */
export interface GateDecisionEventData {
  gate: string;
  proposalId: string;
  decision: GateDecision["decision"];
  reason?: string;
  phase?: GateDecision["phase"];
  soulId: string;
}

export interface PublishDecisionsOptions {
  /** The envelope's `from` (default `gate-chain`). */
  from?: string;
  /** A decision that could not be published; the default is an error line in the runtime log. */
  onError?: (err: unknown, decision: GateDecision) => void;
}

/** A decision listener that publishes; `flush` resolves once everything handed to it is published. */
export interface DecisionPublisher {
  (decision: GateDecision): void;
  flush(): Promise<void>;
}

/**
 * Publishes every decision on the soul's events subject as an `event` envelope
 * `{ type: "gate.decision", data: { gate, proposalId, decision, reason } }`, in the order
 * the chain made them. Pass it as a chain's `onDecision`. Publishing never blocks or fails
 * the chain: the decision has already been taken.
 */
export function publishDecisions(bus: Bus, cluster: string, options: PublishDecisionsOptions = {}): DecisionPublisher {
  const subjects = clusterSubjects(cluster);
  const from = options.from ?? "gate-chain";
  const onError =
    options.onError ??
    ((err: unknown, d: GateDecision) => componentLogger("gate").error(`could not publish the ${d.decision} decision of ${d.gate} on ${d.proposalId}: ${errorMessage(err)}`));
  let last: Promise<void> = Promise.resolve();

  const publisher = ((decision: GateDecision) => {
    last = last.then(async () => {
      try {
        const data: GateDecisionEventData = {
          gate: decision.gate,
          proposalId: decision.proposalId,
          decision: decision.decision,
          soulId: decision.soulId,
          ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          ...(decision.phase !== undefined ? { phase: decision.phase } : {}),
        };
        const env = makeEnvelope("event", from, decision.soulId, { type: GATE_DECISION_EVENT, data }, { causation: decision.proposalId, ts: decision.ts });
        await bus.publish(subjects.events(decision.soulId), encodeEnvelope(env));
      } catch (err) {
        onError(err, decision);
      }
    });
  }) as DecisionPublisher;
  publisher.flush = () => last;
  return publisher;
}
