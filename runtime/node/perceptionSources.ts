/**
 * Where a node's perceptions come from: ONE durable consumer per node, filtering
 * `ensoul.<cluster>.soul.*.perceive`, named `node-<nodeId>`.
 *
 * Why one per node and not one per soul: JetStream consumers are server state (each one a
 * pull subscription, heartbeats, an ack floor, a file on disk), so 1,000 souls must not mean
 * 1,000 consumers, and activating a soul must not mean creating one. The price is that every
 * node reads every perception of the cluster and acks at once those for souls it does not
 * host; for a handful of nodes that is cheap (a filtered, acked message costs a few
 * microseconds), and the consumer of a node that is down keeps its position, so everything
 * published meanwhile is processed when it is back. (Sharding a big cluster by soul would
 * need a subject token to shard on; PROTOCOL v1 has none.)
 *
 * Two implementations (nodePerceptionSources.ts picks one):
 * - On NATS, the node pulls from its consumer itself (own connection, same credentials) so it
 *   can take many perceptions at once: the LMDB inbox write that must happen before the ack
 *   takes a fraction of a millisecond, and a strictly sequential consumer would be bounded by
 *   it (about 1,700 perceptions/s with fsync). Up to `maxInFlight` messages are in flight,
 *   each acked when its own inbox write is done, while each soul's perceptions go through
 *   one lane, in stream order, so a soul still perceives in the order they were published.
 *   A message the handler answers with `{ ackAfter }` (a perception a soul holds
 *   unwritten until its turn commits) leaves its lane and its slot at once and is acked
 *   when that resolves; until then it stays in the keep-alive set, and `stop` waits for it.
 *   The Bus's `durable()` runs one handler at a time per consumer, which is right for most
 *   receivers but not for this one; ack, nak-with-backoff, working and dead-letter-then-term
 *   follow PROTOCOL.md 7.3 exactly as the bus does (jetStreamPerceptionSource.ts, its
 *   lanes in perceptionLanes.ts).
 * - On any other Bus (the in-process bus of a single-process run), `bus.durable()`.
 *
 * Backpressure: a soul keeps at most `maxQueued` perceptions waiting (actors/soul/SoulQueueFull.ts).
 * Before handing a soul a perception, both sources ask `room(soulId)` and, when the soul is
 * full, wait instead of handing it over. The message stays unacked meanwhile (on JetStream it
 * is kept alive with +WPI, and the rest of that soul's lane waits behind it, in order), so
 * nothing is refused, redelivered or dead-lettered for it. On JetStream a waiting lane gives
 * up its in-flight slots, so other souls go on; what finally stops the server delivering is
 * the consumer's `max_ack_pending`, once that many are unacked.
 *
 * The order of a soul's perceptions and speech is kept at five points; docs/ARCHITECTURE.md
 * ("The order of a soul's perceptions and speech") says how they relate. This is one of them.
 */
import { isSoulQueueFull } from "../../actors/soul/index.ts";
import { deadLetter, parseSubject, type Bus } from "../bus/index.ts";
import { atFaultPoint } from "../faults/index.ts";
import type { PerceptionHandler } from "./perceptionIntake.ts";

export interface PerceptionSource {
  /** Stops taking perceptions; those in flight finish (inbox written, acked) first. */
  stop(): Promise<void>;
  readonly closed: Promise<void>;
}

export interface SourceOptions {
  /** `ensoul.<cluster>.soul.*.perceive`. */
  filter: string;
  /** `node-<nodeId>`. */
  consumer: string;
  ackWaitMs: number;
  handler: PerceptionHandler;
  /** Deliveries that may fail before the message is dead-lettered and dropped (default 5). */
  maxDeliver?: number;
  /** Base of the redelivery backoff (200 ms × delivery count, capped at 30 s). */
  retryDelayMs?: number;
  /** Undefined when the soul can take a perception now; else resolves once it can (`Soul.room`). Default: always. */
  room?(soulId: string): Promise<void> | undefined;
  report(err: unknown, context: string): void;
}

/**
 * Hands one message to the handler once its soul has room. A soul filled meanwhile by another
 * sender refuses it (SoulQueueFull): that is waited out too, never counted as a failure.
 */
export async function whenRoom<T>(
  o: SourceOptions,
  subject: string,
  handle: () => Promise<T>,
  /** Waits for the room; false: give up (the source is stopping). */
  wait: (room: Promise<void>) => Promise<boolean> = (room) => room.then(() => true),
): Promise<{ value: T } | undefined> {
  const soulId = parseSubject(subject)?.id;
  for (;;) {
    const room = soulId ? o.room?.(soulId) : undefined;
    if (room) {
      if (!(await wait(room))) return undefined;
      continue;
    }
    try {
      return { value: await handle() };
    } catch (err) {
      if (!isSoulQueueFull(err)) throw err;
    }
  }
}

const noop = () => undefined;

/** Any Bus: its durable consumer, one perception at a time. Its handler never holds a message (the intake runs with `holds: false`). */
export async function busPerceptionSource(bus: Bus, o: SourceOptions): Promise<PerceptionSource> {
  const consumer = await bus.durable(o.filter, o.consumer, async (msg) => {
    await whenRoom(o, msg.subject, () => o.handler(msg.subject, msg.data));
    // The bus acks a message when its handler resolves: a fault here is an ack that never reached the stream.
    await atFaultPoint("perception.ack", noop, { soulId: parseSubject(msg.subject)?.id ?? undefined, seq: msg.seq, delivery: msg.deliveryCount });
  }, {
    ackWaitMs: o.ackWaitMs,
    ...(o.maxDeliver !== undefined ? { maxDeliver: o.maxDeliver } : {}),
    ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
  });
  return { stop: () => consumer.stop(), closed: consumer.closed };
}
