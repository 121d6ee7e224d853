/**
 * What a hosted soul reports about itself (turns, transitions, errors, logs, interceptions,
 * whispers, schedules), and what the node reports about a soul (an approval handled, a
 * perception refused), as `event` envelopes on `ensoul.<cluster>.soul.<id>.events`. Core
 * NATS: these are for debuggers, daimons and clients like `ensoul chat` that are there to
 * watch; nothing depends on them being stored.
 *
 * Types are `soul.<SoulEvent type>` for the soul's own events (`soul.turn`, `soul.error`,
 * ...) and `node.<what>` for the node's (`node.approval`, `node.refused`); gate decisions are
 * `gate.decision` (actors/gate publishDecisions). `causation` is the perception concerned;
 * `trace`, on a turn's and a transition's events, the turn id its speech carries too.
 */
import type { SoulEvent } from "../../actors/soul/index.ts";
import { encodeEnvelope, makeEnvelope, type Bus, type ClusterSubjects } from "../bus/index.ts";

export interface EventPublisher {
  /** A soul's own event, with anything the node adds to its data (a turn's speech ids). */
  soul(event: SoulEvent, extra?: Record<string, unknown>): void;
  /** An event the node raises about a soul. */
  node(soulId: string, type: string, data: Record<string, unknown>, causation?: string): void;
}

export function soulEventCausation(event: SoulEvent): string | undefined {
  switch (event.type) {
    case "turn":
    case "transition":
      return event.perceptionId;
    case "error":
      return event.perceptionId;
    case "intercepted":
      return event.proposal.causation;
    default:
      return undefined;
  }
}

/**
 * An intercepted proposal was stopped because of what it says (a secret, an unapproved
 * command): its content must not leave through the events subject either. Debuggers get
 * which proposal it was and why, never its text or data.
 */
function redacted(event: SoulEvent): SoulEvent | (Omit<Extract<SoulEvent, { type: "intercepted" }>, "proposal"> & { proposal: Record<string, unknown> }) {
  if (event.type !== "intercepted") return event;
  const { id, soulId, turnId, seq, kind, action, causation, ts } = event.proposal;
  return { ...event, proposal: { id, soulId, turnId, seq, kind, ts, ...(action !== undefined ? { action } : {}), ...(causation !== undefined ? { causation } : {}) } };
}

/** `from` is the node's address, used for the node's own events; a soul's events come from the soul. */
export function createEventPublisher(bus: Bus, subjects: ClusterSubjects, from: string, onError: (err: unknown, what: string) => void): EventPublisher {
  const publish = (soulId: string, sender: string, type: string, data: Record<string, unknown>, causation: string | undefined, trace?: string) => {
    try {
      const env = makeEnvelope("event", sender, soulId, { type, data }, { ...(causation !== undefined ? { causation } : {}), ...(trace !== undefined ? { trace } : {}) });
      bus.publish(subjects.events(soulId), encodeEnvelope(env)).catch((err: unknown) => onError(err, `${type} event of ${soulId}`));
    } catch (err) {
      onError(err, `${type} event of ${soulId}`);
    }
  };
  return {
    soul(event, extra) {
      // A turn's or a transition's turn id travels as the envelope's trace, as its speech's does.
      const { type, turnId, ...data } = redacted(event) as SoulEvent & { turnId?: string };
      publish(event.soulId, event.soulId, `soul.${type}`, extra ? { ...data, ...extra } : data, soulEventCausation(event), turnId);
    },
    node(soulId, type, data, causation) {
      publish(soulId, from, `node.${type}`, data, causation);
    },
  };
}
