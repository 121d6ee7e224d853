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
import { isStreamNotFound } from "./jetStreamErrors.ts";
import { backoff } from "./memoryStream.ts";
import { toHeaderRecord } from "./natsMessages.ts";

export interface StreamSettings {
  name: string;
  subjects: readonly string[];
  storage: "file" | "memory";
  duplicateWindowMs: number;
  maxAgeMs: number;
  maxBytes: number;
  /**
   * Copies of the stream on a clustered NATS (1..5; `runtime.replicas` of the cluster config).
   * Undefined: a new stream gets 1 and an existing one keeps its count (CLI commands, which
   * must not change what the nodes set up).
   */
  replicas?: number;
}

/**
 * Creates the cluster stream, or adds our subjects to an existing one. Idempotent, so every node may call it.
 * With `replicas` given, an existing stream with another count is updated to it (JetStream
 * allows that on a clustered server); if the server refuses, the error says what was asked and why.
 */
export async function ensureStream(jsm: JetStreamManager, s: StreamSettings): Promise<void> {
  let existing: string[] | null = null;
  let replicas = 1;
  try {
    const info = await jsm.streams.info(s.name);
    existing = info.config.subjects ?? [];
    replicas = info.config.num_replicas ?? 1;
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
  }
  if (existing === null) {
    const created = await jsm.streams.add({
      name: s.name,
      subjects: [...s.subjects],
      storage: s.storage === "file" ? StorageType.File : StorageType.Memory,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      duplicate_window: nanos(s.duplicateWindowMs),
      max_age: nanos(s.maxAgeMs),
      max_bytes: s.maxBytes,
      num_replicas: s.replicas ?? 1,
    });
    if (s.replicas !== undefined) assertReplicas(s.name, created.config.num_replicas ?? 1, s.replicas);
    return;
  }
  const missing = s.subjects.filter((subj) => !existing.includes(subj));
  if (missing.length > 0) await jsm.streams.update(s.name, { subjects: [...existing, ...missing] });
  if (s.replicas !== undefined && s.replicas !== replicas) await updateReplicas(jsm, s.name, replicas, s.replicas);
}

/**
 * Changes the replica count of an existing stream (the cluster stream, the shared-context
 * bucket's), or throws an error that names the stream, both counts and the server's reason.
 */
export async function updateReplicas(jsm: JetStreamManager, stream: string, from: number, to: number): Promise<void> {
  let kept: number;
  try {
    kept = (await jsm.streams.update(stream, { num_replicas: to })).config.num_replicas ?? 1;
  } catch (err) {
    // Nodes starting together each ask for the change; nats-server 2.9 leaves the second request
    // unanswered while the first is applied (a timeout, not a refusal). Done is done, by whoever did it.
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || /timeout/i.test(err.message));
    const deadline = Date.now() + (timedOut ? 15_000 : 0);
    for (;;) {
      const now = await jsm.streams.info(stream).then(
        (info) => info.config.num_replicas,
        () => undefined,
      );
      if (now === to) return;
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const why = err instanceof Error ? err.message : String(err);
    throw new BusError(
      `stream ${stream} has ${from} replica${from === 1 ? "" : "s"}, runtime.replicas asks for ${to}, and the server refused the change (${why}); ` +
        `set runtime.replicas to ${from}, or change the stream with \`nats stream edit ${stream} --replicas ${to}\` on a clustered server`,
      { cause: err },
    );
  }
  assertReplicas(stream, kept, to);
}

/**
 * A NATS server that is not part of a cluster accepts a replica count above 1 and keeps one
 * copy, silently: said here rather than let a config that asks for three copies run on one.
 */
export function assertReplicas(stream: string, kept: number, asked: number): void {
  if (kept === asked) return;
  throw new BusError(
    `stream ${stream} has ${kept} replica${kept === 1 ? "" : "s"} although runtime.replicas asks for ${asked}: the server kept ${kept} ` +
      `(a nats-server that is not part of a cluster keeps one copy); set runtime.replicas to ${kept}, or connect to a clustered NATS`,
  );
}

/**
 * How long one pull request of a durable consumer lives. The client notices a pull the server
 * lost (its stream's leader moved, on a NATS cluster) after two missed idle heartbeats of half
 * this each, and pulls again: the bound on a consumer's deafness after such a fault.
 */
export const PULL_EXPIRES_MS = 5_000;

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
    // A pull lives `expires`; the client re-pulls after two missed idle heartbeats (expires/2 each).
    // The default (30 s) left a consumer deaf for 30 s when its stream's leader moved to another
    // server of a NATS cluster (test/chaos/natsCluster.test.ts); 5 s bounds that.
    const messages = await consumer.consume({ max_messages: PULL_BATCH, expires: PULL_EXPIRES_MS });

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
