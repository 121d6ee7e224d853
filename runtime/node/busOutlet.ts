/**
 * Where a hosted soul's proposals reach the world: its says subject for speech (streamed
 * chunks, then the final text) and its events subject for dispatched actions. The soul
 * calls `deliver` only after the turn committed, and again after a crash for whatever was
 * not acknowledged; each message carries a stable id as its `Nats-Msg-Id` (the proposal id,
 * plus `~<chunk>` for chunks), so the stream stores a re-publish once.
 *
 * Publishes are pipelined, not waited for one by one: each is handed to the bus as soon as
 * the soul produces it, in the order it produces them, so the stream stores a soul's chunks
 * and then its final in order while their acks are still on their way. A streamed answer
 * of forty chunks costs one round trip to the stream, not forty. `deliver` resolves once the
 * final and every chunk before it are stored.
 */
import type { Outlet, Proposal } from "../../actors/soul/index.ts";
import { encodeEnvelope, makeEnvelope, type Bus, type ClusterSubjects } from "../bus/index.ts";

export interface BusOutletOptions {
  bus: Bus;
  subjects: ClusterSubjects;
  /** The perception the soul is answering now: what its streamed chunks are caused by. */
  runningPerception(soulId: string): string | undefined;
  /** Who sent a perception (its envelope's `from`): the `to` of the speech answering it. */
  senderOf(perceptionId: string): string | undefined;
  /** A chunk that could not be published (a final's failure goes back to the soul, which keeps it in its outbox and publishes it again, OutboxDelivery.ts). */
  onError(err: unknown, what: string): void;
}

export interface BusOutlet extends Outlet {
  chunk(soulId: string, proposalId: string, text: string): void;
  deliver(proposal: Proposal): Promise<void>;
  /** Resolves once everything handed over so far has been published (or has failed). */
  settled(): Promise<void>;
}

/** The address speech goes to when the perception's sender is not known (after a restart). */
export const UNKNOWN_LISTENER = "world";

const STREAMS_KEPT = 10_000;

interface Streaming {
  count: number;
  causation: string | undefined;
  published: Promise<void>[];
}

export function createBusOutlet(options: BusOutletOptions): BusOutlet {
  const { bus, subjects } = options;
  const streaming = new Map<string, Streaming>();
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    const forget = () => void inFlight.delete(p);
    p.then(forget, forget);
    return p;
  };
  const listener = (causation: string | undefined) => (causation !== undefined ? options.senderOf(causation) : undefined) ?? UNKNOWN_LISTENER;
  const turnOf = (proposalId: string) => proposalId.slice(0, Math.max(0, proposalId.lastIndexOf(":"))) || proposalId;

  return {
    chunk(soulId, proposalId, text) {
      let stream = streaming.get(proposalId);
      if (!stream) {
        streaming.set(proposalId, (stream = { count: 0, causation: options.runningPerception(soulId), published: [] }));
        // A streamed proposal the gates then intercept is never delivered: forget the oldest beyond a bound.
        if (streaming.size > STREAMS_KEPT) streaming.delete(streaming.keys().next().value as string);
      }
      const n = stream.count++;
      const seq = Number(proposalId.slice(proposalId.lastIndexOf(":") + 1));
      try {
        const env = makeEnvelope(
          "speech",
          soulId,
          listener(stream.causation),
          { proposalId, text, final: false, chunk: n, ...(Number.isSafeInteger(seq) && seq >= 0 ? { seq } : {}) },
          { id: `${proposalId}~${n}`, trace: turnOf(proposalId), ...(stream.causation ? { causation: stream.causation } : {}) },
        );
        const published = track(bus.publish(subjects.says(soulId), encodeEnvelope(env), { msgId: env.id })).catch((err: unknown) =>
          options.onError(err, `chunk ${n} of ${proposalId}`),
        );
        stream.published.push(published);
      } catch (err) {
        options.onError(err, `chunk ${n} of ${proposalId}`);
      }
    },

    async deliver(proposal) {
      const { soulId } = proposal;
      const stream = streaming.get(proposal.id);
      streaming.delete(proposal.id);
      const opts = { id: proposal.id, trace: proposal.turnId, ...(proposal.causation ? { causation: proposal.causation } : {}) };
      if (proposal.kind === "speak") {
        const env = makeEnvelope("speech", soulId, listener(proposal.causation), { proposalId: proposal.id, text: proposal.content, final: true, seq: proposal.seq }, opts);
        const final = track(bus.publish(subjects.says(soulId), encodeEnvelope(env), { msgId: env.id }));
        await Promise.all([...(stream?.published ?? []), final]);
        return;
      }
      if (proposal.kind === "dispatch") {
        const data = {
          proposalId: proposal.id,
          action: proposal.action ?? "",
          content: proposal.content,
          ...(proposal.data !== undefined ? { data: proposal.data } : {}),
          ...(proposal.meta !== undefined ? { meta: proposal.meta } : {}),
        };
        const env = makeEnvelope("event", soulId, listener(proposal.causation), { type: "soul.dispatch", data }, opts);
        await track(bus.publish(subjects.events(soulId), encodeEnvelope(env)));
      }
      // A log proposal becomes the soul's own `log` event once delivered; that is published with the other soul events.
    },

    async settled() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
