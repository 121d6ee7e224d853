/**
 * The JetStream side of the NATS bus: the cluster stream, durable publishing that
 * survives a server restart, and durable consumers.
 *
 * Only features nats-server 2.9 (what Debian ships) supports are used: one
 * `filter_subject` per consumer (not 2.10's `filter_subjects`), no stream metadata, no
 * compression, no subject transforms, `term()` without a reason.
 */
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { DurableConsumer, DurableHandler, DurableMessage, DurableOptions, HandlerErrorReporter } from "./Bus.ts";
import { BusError } from "./errors.ts";
import { backoff } from "./memoryStream.ts";
import { toHeaderRecord } from "./natsMessages.ts";

export interface StreamSettings {
  name: string;
  subjects: readonly string[];
  storage: "file" | "memory";
  duplicateWindowMs: number;
  maxAgeMs: number;
  maxBytes: number;
}

/** Creates the cluster stream, or adds our subjects to an existing one. Idempotent, so every node may call it. */
export async function ensureStream(jsm: JetStreamManager, s: StreamSettings): Promise<void> {
  let existing: string[] | null = null;
  try {
    existing = (await jsm.streams.info(s.name)).config.subjects ?? [];
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
  }
  if (existing === null) {
    await jsm.streams.add({
      name: s.name,
      subjects: [...s.subjects],
      storage: s.storage === "file" ? StorageType.File : StorageType.Memory,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      duplicate_window: nanos(s.duplicateWindowMs),
      max_age: nanos(s.maxAgeMs),
      max_bytes: s.maxBytes,
      num_replicas: 1,
    });
    return;
  }
  const missing = s.subjects.filter((subj) => !existing.includes(subj));
  if (missing.length > 0) await jsm.streams.update(s.name, { subjects: [...existing, ...missing] });
}

function isStreamNotFound(err: unknown): boolean {
  return err instanceof Error && (err.name === "StreamNotFoundError" || /stream not found/i.test(err.message));
}

export interface RunnerHooks {
  /** Resolves to whether the dead letter was written; only then is the message terminated. */
  onExhausted(msg: DurableMessage, err: unknown): Promise<boolean>;
  report: HandlerErrorReporter;
}

/** Messages pulled per request. Small, because a drain handles everything already pulled before it stops. */
const PULL_BATCH = 32;

/**
 * One running instance of a durable pull consumer. Creating it creates (or updates) the
 * consumer on the server; stopping it leaves the consumer and its position in place.
 */
export class NatsDurableRunner implements DurableConsumer {
  readonly name: string;
  readonly filter: string;
  readonly closed: Promise<void>;
  private stopRequested: (() => void) | null = null;
  private stopping = false;

  private constructor(name: string, filter: string, run: (runner: NatsDurableRunner) => Promise<void>) {
    this.name = name;
    this.filter = filter;
    this.closed = run(this);
  }

  static async start(
    js: JetStreamClient,
    jsm: JetStreamManager,
    stream: string,
    filter: string,
    name: string,
    handler: DurableHandler,
    opts: DurableOptions,
    hooks: RunnerHooks,
  ): Promise<NatsDurableRunner> {
    const ackWaitMs = opts.ackWaitMs ?? 30_000;
    const maxDeliver = opts.maxDeliver ?? 5;
    const retryDelayMs = opts.retryDelayMs ?? 200;
    try {
      const info = await jsm.consumers.info(stream, name);
      if (info.config.filter_subject !== filter) {
        throw new BusError(`durable consumer ${name} already exists with filter ${info.config.filter_subject ?? "(none)"}, not ${filter}`);
      }
      if (info.config.ack_wait !== nanos(ackWaitMs)) await jsm.consumers.update(stream, name, { ack_wait: nanos(ackWaitMs) });
    } catch (err) {
      if (err instanceof BusError) throw err;
      if (!(err instanceof Error && (err.name === "ConsumerNotFoundError" || /consumer not found/i.test(err.message)))) throw err;
      await jsm.consumers.add(stream, {
        durable_name: name,
        filter_subject: filter,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: opts.deliver === "new" ? DeliverPolicy.New : DeliverPolicy.All,
        ack_wait: nanos(ackWaitMs),
        // Our own count decides when to dead-letter (after a throw); the server keeps redelivering until then.
        max_deliver: -1,
      });
    }
    const consumer = await js.consumers.get(stream, name);
    const messages = await consumer.consume({ max_messages: PULL_BATCH });

    return new NatsDurableRunner(name, filter, async (runner) => {
      runner.stopRequested = () => void messages.close();
      try {
        for await (const m of messages) {
          // Pulled after stop was asked for: hand it straight back so another instance gets it now, not after ack_wait.
          if (runner.stopping) safely(() => m.nak());
          else await runner.handle(m, handler, { ackWaitMs, maxDeliver, retryDelayMs }, hooks);
        }
      } catch (err) {
        // The connection closed under us (close(), or the server is gone for good); unacked messages will be redelivered.
        if (!runner.stopping) hooks.report(err, { subject: filter, consumer: name });
      }
    });
  }

  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.stopRequested?.();
    }
    return this.closed;
  }

  private async handle(m: JsMsg, handler: DurableHandler, o: { ackWaitMs: number; maxDeliver: number; retryDelayMs: number }, hooks: RunnerHooks): Promise<void> {
    const deliveries = m.info.deliveryCount;
    const headers = toHeaderRecord(m.headers);
    const msg: DurableMessage = {
      subject: m.subject,
      data: m.data,
      ...(headers ? { headers } : {}),
      seq: m.seq,
      deliveryCount: deliveries,
      redelivered: deliveries > 1,
    };
    // A slow handler is not a crashed one: keep telling the server we are working on it.
    const keepAlive = setInterval(() => safely(() => m.working()), Math.max(100, Math.floor(o.ackWaitMs / 2)));
    try {
      await handler(msg);
      safely(() => m.ack());
    } catch (err) {
      hooks.report(err, { subject: m.subject, consumer: this.name });
      // +TERM only with the dead letter written: a message terminated without one would
      // vanish, so it is handed back for redelivery instead, as after any failed delivery.
      const ended = deliveries >= o.maxDeliver && (await hooks.onExhausted(msg, err).catch(() => false));
      if (ended) safely(() => m.term());
      else safely(() => m.nak(backoff(o.retryDelayMs, deliveries)));
    } finally {
      clearInterval(keepAlive);
    }
  }
}

/** Acks on a closed connection throw; the server redelivers anyway, which is what a crash means. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // the connection is gone: at-least-once delivery covers it
  }
}
