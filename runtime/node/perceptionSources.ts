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
 * Two implementations:
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
 *   follow PROTOCOL.md 7.3 exactly as the bus does.
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
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JsMsg,
} from "@nats-io/jetstream";
import { connect, nanos, type NatsConnection } from "@nats-io/transport-node";
import { isSoulQueueFull } from "../../actors/soul/index.ts";
import { deadLetter, parseSubject, type Bus } from "../bus/index.ts";
import { natsConnectionOptions, type NatsConnectOptions } from "./natsConnection.ts";
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
async function whenRoom<T>(
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

/** Any Bus: its durable consumer, one perception at a time. Its handler never holds a message (the intake runs with `holds: false`). */
export async function busPerceptionSource(bus: Bus, o: SourceOptions): Promise<PerceptionSource> {
  const consumer = await bus.durable(o.filter, o.consumer, async (msg) => void (await whenRoom(o, msg.subject, () => o.handler(msg.subject, msg.data))), {
    ackWaitMs: o.ackWaitMs,
    ...(o.maxDeliver !== undefined ? { maxDeliver: o.maxDeliver } : {}),
    ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
  });
  return { stop: () => consumer.stop(), closed: consumer.closed };
}

/**
 * The node's source: its own JetStream consumer when it joined a cluster on NATS (`jetStream`),
 * else the bus's durable consumer (the in-process bus, or a Bus the caller handed in).
 */
export function startPerceptionSource(
  bus: Bus,
  o: SourceOptions & { jetStream?: Omit<JetStreamSourceOptions, keyof SourceOptions | "bus"> },
): Promise<PerceptionSource> {
  const { jetStream, ...source } = o;
  return jetStream ? jetStreamPerceptionSource({ ...source, ...jetStream, bus }) : busPerceptionSource(bus, source);
}

export interface JetStreamSourceOptions extends SourceOptions {
  nats: NatsConnectOptions;
  bus: Bus;
  /** `ENSOUL_<cluster>`; the bus has created it. */
  stream: string;
  /** Perceptions in flight at once, across souls. */
  maxInFlight: number;
  /** Connection name shown by the server. */
  name: string;
}

interface Lane {
  tail: Promise<void>;
  /**
   * A perception of this soul failed (its inbox could not be written), or was handed back
   * while waiting for room as the source stopped: the ones queued behind it are handed back
   * too, so none overtakes it. After such a failure the order is JetStream's redelivery
   * order, which follows the nak delays: close to, but not guaranteed to be, the stream
   * order. In the normal path (no failure) a soul's order is the stream's.
   */
  failed: boolean;
  /** Messages in this lane, not yet finished. */
  size: number;
  /** Waiting for its soul to make room: its messages hold no in-flight slot meanwhile. */
  parked: boolean;
}

interface InFlight {
  msg: JsMsg;
  startedAt: number;
}

export async function jetStreamPerceptionSource(o: JetStreamSourceOptions): Promise<PerceptionSource> {
  const maxDeliver = o.maxDeliver ?? 5;
  const retryDelayMs = o.retryDelayMs ?? 200;
  const nc: NatsConnection = await connect(natsConnectionOptions(o.nats, o.name));
  let messages: ConsumerMessages;
  try {
    const jsm = await jetstreamManager(nc);
    await ensureConsumer(jsm, o.stream, o.consumer, o.filter, o.ackWaitMs, o.maxInFlight);
    const consumer = await jetstream(nc).consumers.get(o.stream, o.consumer);
    messages = await consumer.consume({ max_messages: Math.min(1_000, Math.max(64, o.maxInFlight)) });
  } catch (err) {
    await nc.close();
    throw err;
  }

  const lanes = new Map<string, Lane>();
  /** Taken and not finished, in a lane (waiting for room or not): kept alive, awaited by `stop`. */
  const inFlight = new Set<InFlight>();
  /** Of those, the ones holding a slot (`maxInFlight`): those whose lane is not parked. */
  let active = 0;
  /** Handed to a soul that holds them until its turn commits: no slot, but kept alive and awaited by `stop`. */
  const held = new Map<InFlight, Promise<void>>();
  let stopping = false;
  let handBack!: () => void;
  const stopAsked = new Promise<void>((resolve) => (handBack = resolve));
  let slotFreed: (() => void) | null = null;
  const wakeSlot = () => {
    const wake = slotFreed;
    slotFreed = null;
    wake?.();
  };

  const backoff = (deliveries: number) => Math.min(30_000, retryDelayMs * deliveries);
  const safely = (fn: () => void) => {
    try {
      fn();
    } catch {
      // the connection is gone: the server redelivers after ack_wait, which is what a crash means
    }
  };

  // A slow perception (a soul activating from a large LMDB state) is not a crashed one.
  const keepAlive = setInterval(() => {
    const now = Date.now();
    for (const f of inFlight) if (now - f.startedAt > o.ackWaitMs / 3) safely(() => f.msg.working());
    for (const f of held.keys()) if (now - f.startedAt > o.ackWaitMs / 3) safely(() => f.msg.working());
  }, Math.max(50, Math.floor(o.ackWaitMs / 2)));

  const ackWhen = (entry: InFlight, ackAfter: Promise<void>) => {
    const m = entry.msg;
    const settled = ackAfter.then(
      () => safely(() => m.ack()),
      (err: unknown) => {
        // The soul stopped before processing it: the server delivers it again (here after a restart, or to a twin).
        if (!stopping) o.report(err, `perception ${m.seq} on ${m.subject} handed back`);
        safely(() => m.nak(backoff(m.info.deliveryCount)));
      },
    );
    held.set(entry, settled);
    void settled.finally(() => held.delete(entry));
  };

  /** The soul is full: the lane gives up its slots until it has room (or the source stops: false). */
  const parkUntil = async (lane: Lane, room: Promise<void>): Promise<boolean> => {
    if (stopping) return false;
    lane.parked = true;
    active -= lane.size;
    wakeSlot();
    try {
      await Promise.race([room, stopAsked]);
    } finally {
      lane.parked = false;
      active += lane.size;
    }
    return !stopping;
  };

  const handleOne = async (entry: InFlight, lane: Lane): Promise<void> => {
    const m = entry.msg;
    const deliveries = m.info.deliveryCount;
    if (lane.failed) {
      safely(() => m.nak(backoff(deliveries)));
      return;
    }
    try {
      const taken = await whenRoom(o, m.subject, () => o.handler(m.subject, m.data), (room) => parkUntil(lane, room));
      if (!taken) {
        // Stopping while its soul had no room: handed back unprocessed, for the next start.
        lane.failed = true;
        safely(() => m.nak());
        return;
      }
      const outcome = taken.value;
      if (outcome) ackWhen(entry, outcome.ackAfter);
      else safely(() => m.ack());
    } catch (err) {
      lane.failed = true;
      o.report(err, `perception ${m.seq} on ${m.subject} (delivery ${deliveries})`);
      const reason = `handler failed on delivery ${deliveries}, the last one allowed: ${err instanceof Error ? err.message : String(err)}`;
      // +TERM only with its dead letter written: otherwise the perception would vanish, so it comes back instead.
      const ended = deliveries >= maxDeliver && (await deadLetter(o.bus, o.bus.cluster, { subject: m.subject, reason, data: m.data }));
      if (ended) safely(() => m.term());
      else safely(() => m.nak(backoff(deliveries)));
    }
  };

  const dispatch = (m: JsMsg) => {
    const key = parseSubject(m.subject)?.id ?? m.subject;
    const entry: InFlight = { msg: m, startedAt: Date.now() };
    inFlight.add(entry);
    let lane = lanes.get(key);
    if (!lane) {
      lane = { tail: Promise.resolve(), failed: false, size: 0, parked: false };
      lanes.set(key, lane);
    }
    const current = lane;
    current.size++;
    if (!current.parked) active++;
    const tail = current.tail.then(() => handleOne(entry, current));
    current.tail = tail;
    void tail.finally(() => {
      inFlight.delete(entry);
      current.size--;
      if (!current.parked) active--;
      if (current.tail === tail && lanes.get(key) === current) lanes.delete(key);
      wakeSlot();
    });
  };

  const closed = (async () => {
    try {
      for await (const m of messages) {
        // Pulled after stop was asked for: hand it straight back, for the next start (or another instance).
        if (stopping) {
          safely(() => m.nak());
          continue;
        }
        while (active >= o.maxInFlight) await new Promise<void>((resolve) => (slotFreed = resolve));
        dispatch(m);
      }
    } catch (err) {
      if (!stopping) o.report(err, `consumer ${o.consumer}`);
    }
    await Promise.all([...lanes.values()].map((l) => l.tail));
    while (held.size > 0) await Promise.all([...held.values()]);
    clearInterval(keepAlive);
    if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
  })();

  return {
    closed,
    async stop() {
      stopping = true;
      handBack();
      await messages.close();
      await closed;
    },
  };
}

/**
 * Creates the node's consumer, or checks and updates an existing one.
 *
 * A consumer with deliveries still unacked belongs to a node process that died (startNode
 * has checked that no other process runs as this node). Left alone, JetStream would deliver
 * what was published since at once and hand back the dead process's messages only when their
 * ack_wait runs out, so a soul could perceive a later perception before an earlier one. So
 * the consumer is recreated to start again right after its ack floor: everything not yet
 * acked comes back in stream order. Messages after the floor that were acked out of order
 * come back too; the inbox recognises them (a redelivery is a no-op), though a bad one is
 * dead-lettered a second time.
 */
async function ensureConsumer(
  jsm: Awaited<ReturnType<typeof jetstreamManager>>,
  stream: string,
  name: string,
  filter: string,
  ackWaitMs: number,
  maxInFlight: number,
): Promise<void> {
  const maxAckPending = Math.max(1_000, maxInFlight * 4);
  const config = {
    durable_name: name,
    filter_subject: filter,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(ackWaitMs),
    max_ack_pending: maxAckPending,
    // Our own count decides when to dead-letter; the server keeps redelivering until then.
    max_deliver: -1,
  };
  let info;
  try {
    info = await jsm.consumers.info(stream, name);
  } catch (err) {
    if (!(err instanceof Error && (err.name === "ConsumerNotFoundError" || /consumer not found/i.test(err.message)))) throw err;
    await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.All });
    return;
  }
  if (info.config.filter_subject !== filter) {
    throw new Error(`durable consumer ${name} already exists with filter ${info.config.filter_subject ?? "(none)"}, not ${filter}`);
  }
  if (info.num_ack_pending > 0) {
    await jsm.consumers.delete(stream, name);
    await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: info.ack_floor.stream_seq + 1 });
    return;
  }
  if (info.config.ack_wait !== nanos(ackWaitMs) || (info.config.max_ack_pending ?? 0) < maxAckPending) {
    await jsm.consumers.update(stream, name, { ack_wait: nanos(ackWaitMs), max_ack_pending: maxAckPending });
  }
}
