/**
 * NATS messages as Bus messages: header conversion, the message wrapper, and the core
 * subscription that runs a handler loop.
 */
import { headers as natsHeaders, type Msg, type MsgHdrs, type Subscription as NatsSubscriptionHandle } from "@nats-io/transport-node";
import type { BusHeaders, BusMessage, HandlerErrorReporter, MessageHandler, Subscription } from "./Bus.ts";
import { BusError, SubscriptionRefusedError } from "./errors.ts";

/** The header NATS JetStream dedupes on. */
export const MSG_ID_HEADER = "Nats-Msg-Id";

export function toHeaderRecord(hdrs: MsgHdrs | undefined): BusHeaders | undefined {
  if (!hdrs) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  for (const [k, values] of hdrs) {
    if (values.length === 0) continue;
    out[k] = values[values.length - 1];
    any = true;
  }
  return any ? out : undefined;
}

/**
 * A core subscription. Handler mode runs one loop that awaits each handler in turn, which
 * is what makes delivery ordered and lets drain wait for the in-flight handler.
 */
export class NatsSubscription implements Subscription {
  readonly subject: string;
  readonly queue?: string;
  readonly closed: Promise<void>;
  private readonly raw: NatsSubscriptionHandle;
  private readonly handler: MessageHandler | undefined;
  /** A round trip to the server (the connection's flush). */
  private readonly roundTrip: () => Promise<void>;
  private unsubscribed = false;

  constructor(
    raw: NatsSubscriptionHandle,
    subject: string,
    queue: string | undefined,
    handler: MessageHandler | undefined,
    report: HandlerErrorReporter,
    roundTrip: () => Promise<void>,
  ) {
    this.raw = raw;
    this.roundTrip = roundTrip;
    this.subject = subject;
    if (queue !== undefined) this.queue = queue;
    this.handler = handler;
    this.closed = handler
      ? (async () => {
          try {
            for await (const m of raw) {
              try {
                await handler(wrap(m));
              } catch (err) {
                report(err, { subject });
              }
            }
          } catch {
            // the subscription ended with an error (permissions, connection closed): it is over either way
          }
        })()
      : raw.closed.then(() => undefined);
  }

  unsubscribe(): void {
    this.unsubscribed = true;
    if (!this.raw.isClosed()) this.raw.unsubscribe();
  }

  async accepted(): Promise<void> {
    // The server answers in order: a refusal of the SUB arrives before the PONG of this
    // flush, and nats.js closes the subscription with it as it reads it.
    await this.roundTrip();
    if (this.unsubscribed || !this.raw.isClosed()) return;
    const reason = await this.raw.closed;
    if (reason instanceof Error) throw new SubscriptionRefusedError(this.subject, reason.message, { cause: reason });
  }

  async drain(): Promise<void> {
    if (!this.raw.isClosed() && !this.raw.isDraining()) await this.raw.drain().catch(() => undefined);
    // An iterator's reader decides when it is done; drain cannot wait on it.
    if (this.handler) await this.closed;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<BusMessage> {
    if (this.handler) throw new BusError(`subscription on ${this.subject} has a handler; it cannot also be iterated`);
    try {
      for await (const m of this.raw) yield wrap(m);
    } finally {
      this.unsubscribe();
    }
  }
}

export function wrap(m: Msg): BusMessage {
  const headers = toHeaderRecord(m.headers);
  // A message carrying Nats-Msg-Id was sent with JetStream publish: its reply subject
  // belongs to the stream's ack, and answering it would corrupt the publisher's ack.
  const reply = m.reply && !(headers && MSG_ID_HEADER in headers) ? m.reply : undefined;
  const msg: { -readonly [K in keyof BusMessage]: BusMessage[K] } = {
    subject: m.subject,
    data: m.data,
    respond: (data, opts) => {
      if (!reply) return false;
      try {
        return m.respond(data, opts?.headers ? { headers: toHeaders(opts.headers) } : undefined);
      } catch {
        return false;
      }
    },
  };
  if (reply) msg.reply = reply;
  if (headers) msg.headers = headers;
  return msg;
}

export function toHeaders(h: BusHeaders | undefined): MsgHdrs | undefined {
  if (!h) return undefined;
  const entries = Object.entries(h);
  if (entries.length === 0) return undefined;
  const out = natsHeaders();
  for (const [k, v] of entries) out.set(k, v);
  return out;
}
