/**
 * The one Bus interface. Actors see only this; whether NATS (across machines) or the
 * in-process bus (one process, the embedded default) is underneath is a deployment choice,
 * and one contract suite (test/contract/bus) holds both to the same semantics.
 *
 * Two kinds of delivery:
 * - core: publish/subscribe/request. At most once, fast, nothing stored. A subscriber that
 *   is not running misses the message. Delivery is asynchronous (never inside `publish`)
 *   and in publish order per subscription.
 * - durable: `durable(filter, name, handler)`. At least once, stored in the cluster stream
 *   (subjects.ts `streamSubjects`: perceive and says). The handler's return is the ack; a
 *   throw, a crash or a lost connection means redelivery. A `msgId` on publish makes the
 *   stream drop a repeat within the dedupe window, so re-publishing after a crash is safe.
 */

import { componentLogger } from "../log/index.ts";
import type { SharedKv } from "./sharedKv.ts";
import type { LeaseStore } from "./leases.ts";
import type { SoulHistoryLog } from "./soulHistoryLog.ts";

/** Headers travel as NATS headers; the bus keeps the last value of a repeated key. */
export type BusHeaders = Readonly<Record<string, string>>;

export interface BusMessage {
  readonly subject: string;
  /** Treat as read-only: on the in-process bus it is this subscriber's own copy, on NATS the client's buffer. */
  readonly data: Uint8Array;
  /** Set when the message is a request. */
  readonly reply?: string;
  readonly headers?: BusHeaders;
  /** Replies to a request. False when there is nothing to reply to (not a request, or the bus is closed). */
  respond(data: Uint8Array, opts?: { headers?: BusHeaders }): boolean;
}

export type MessageHandler = (msg: BusMessage) => void | Promise<void>;

export interface SubscribeOptions {
  /** Queue group: each message goes to one member of the group instead of to all. */
  queue?: string;
}

/**
 * A live subscription. With a handler, messages go to the handler one at a time, in
 * order (the next waits for the previous handler's promise). Without one, iterate it:
 * `for await (const msg of sub)`; the loop ends when the subscription ends.
 */
export interface Subscription extends AsyncIterable<BusMessage> {
  readonly subject: string;
  readonly queue?: string;
  /** Stops delivery now; messages not yet handled are dropped. */
  unsubscribe(): void;
  /** Resolves when the subscription has ended and its handler (if any) has returned. */
  readonly closed: Promise<void>;
  /**
   * Resolves once the bus has taken the subscription; rejects if it refused it. NATS refuses
   * a subject the user may not subscribe to after the fact (a permissions violation follows
   * the SUB), so this is a round trip to the server. Subscribing never waits for it: call it
   * where a refusal must not pass unnoticed.
   */
  accepted(): Promise<void>;
}

export interface PublishOptions {
  /**
   * Idempotency key: on a durable subject the stream keeps the first message with this id
   * and drops repeats within the dedupe window (sent as the `Nats-Msg-Id` header on NATS).
   * Core subscribers see every publish.
   */
  msgId?: string;
  headers?: BusHeaders;
}

export interface RequestOptions {
  timeoutMs: number;
  headers?: BusHeaders;
}

export interface DurableMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers?: BusHeaders;
  /** Position in the cluster stream. */
  readonly seq: number;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  readonly redelivered: boolean;
}

/** Returning (or resolving) acks the message; throwing asks for redelivery. */
export type DurableHandler = (msg: DurableMessage) => void | Promise<void>;

export interface DurableOptions {
  /**
   * How long a delivered, unacked message waits before redelivery (crash recovery). Default
   * 30 s. NATS only: the in-process bus cannot lose a delivery while it lives.
   */
  ackWaitMs?: number;
  /**
   * Deliveries that may end in a throw; after the last, the message is dead-lettered with
   * the error as its reason and acked, so one poison message cannot stall a consumer forever.
   * Default 5.
   */
  maxDeliver?: number;
  /** Base delay before redelivering after a throw; grows with each attempt. Default 200 ms. */
  retryDelayMs?: number;
  /** Where a newly created consumer starts: every stored message (default) or only new ones. */
  deliver?: "all" | "new";
}

export interface DurableConsumer {
  readonly name: string;
  readonly filter: string;
  /** Stops taking messages, lets the in-flight handler finish and ack. The consumer's position is kept. */
  stop(): Promise<void>;
  /** Resolves when the consumer has stopped (by stop, drain or close). */
  readonly closed: Promise<void>;
}

export interface Bus {
  readonly kind: "in-process" | "nats";
  /** The cluster namespace this bus serves (its stream is `ENSOUL_<cluster>`). */
  readonly cluster: string;
  /**
   * Core publish resolves once the message is handed over. On a durable subject it
   * resolves once the stream has stored it (on NATS: after the PubAck, retrying across
   * reconnects until `publishTimeoutMs`).
   */
  publish(subject: string, data: Uint8Array, opts?: PublishOptions): Promise<void>;
  subscribe(subject: string, opts?: SubscribeOptions): Subscription;
  subscribe(subject: string, handler: MessageHandler, opts?: SubscribeOptions): Subscription;
  /** Resolves to the first reply's data; BusTimeoutError or NoRespondersError otherwise. */
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array>;
  /** Starts (creating if needed) the named durable consumer on the cluster stream. */
  durable(subjectFilter: string, consumerName: string, handler: DurableHandler, opts?: DurableOptions): Promise<DurableConsumer>;
  /**
   * Graceful shutdown: no new subscriptions; subscriptions and durable consumers stop
   * taking messages, in-flight handlers finish (and may still publish and respond), then
   * the bus closes. Publishing after that rejects with BusClosedError.
   */
  drain(): Promise<void>;
  /** Immediate shutdown: in-flight handlers are abandoned, unacked durable messages are redelivered later. */
  close(): Promise<void>;
  /** Resolves once the bus is closed, whatever closed it. */
  readonly closed: Promise<void>;
  /**
   * The cluster's shared key-value state (sharedKv.ts, `useSharedContext`): one per bus, over the
   * bus's own connection. Optional so that a bus made for a test need not have one.
   */
  sharedKv?(): SharedKv;
  /** Souls' replicated history (soulHistoryLog.ts, failover): on NATS only. */
  soulHistory?(): SoulHistoryLog;
  /** Node and soul leases (leases.ts, failover) with this node-lease time to live: on NATS only. */
  leases?(ttlMs: number): LeaseStore;
}

/** Splits the overloads of `subscribe`. */
export function subscribeArgs(
  handlerOrOpts: MessageHandler | SubscribeOptions | undefined,
  maybeOpts: SubscribeOptions | undefined,
): { handler: MessageHandler | undefined; opts: SubscribeOptions } {
  if (typeof handlerOrOpts === "function") return { handler: handlerOrOpts, opts: maybeOpts ?? {} };
  return { handler: undefined, opts: handlerOrOpts ?? {} };
}

/** Reports handler failures; the subscription keeps serving. */
export type HandlerErrorReporter = (err: unknown, context: { subject: string; consumer?: string }) => void;

export const defaultHandlerErrorReporter: HandlerErrorReporter = (err, ctx) => {
  const where = ctx.consumer ? `durable consumer ${ctx.consumer}` : `subscription on ${ctx.subject}`;
  componentLogger("bus").error(`handler error in ${where}: ${err instanceof Error ? err.message : String(err)}`);
};
