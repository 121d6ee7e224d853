/**
 * The Bus on NATS, with the official client (@nats-io/transport-node, @nats-io/jetstream).
 * Core NATS carries most traffic (pub/sub, queue groups, request/reply); JetStream carries
 * what must survive downtime: the cluster stream `ENSOUL_<cluster>` captures every soul's
 * perceive and says subjects, and `durable()` consumes from it.
 *
 * The connection never gives up reconnecting (`maxReconnectAttempts: -1`). Core publishes
 * made while disconnected are buffered by the client and may be lost, as NATS core is at
 * most once; durable publishes wait for the stream's ack and retry across the outage with
 * the same `Nats-Msg-Id`, so a retry can never store a message twice.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  RequestError,
  TimeoutError,
  type ConnectionOptions,
  type NatsConnection,
} from "@nats-io/transport-node";
import { nextUlid } from "./ulids.ts";
import {
  defaultHandlerErrorReporter,
  subscribeArgs,
  type Bus,
  type DurableConsumer,
  type DurableHandler,
  type DurableOptions,
  type HandlerErrorReporter,
  type MessageHandler,
  type PublishOptions,
  type RequestOptions,
  type SubscribeOptions,
  type Subscription,
} from "./Bus.ts";
import { assertCanConsume, assertCanSubscribe, assertRequestSubject, deadLetterExhausted, isStreamSubject, keepUntilClosed, stopIntake, type BusState } from "./busGuards.ts";
import { BusClosedError, BusError, BusTimeoutError, DurablePublishError, NoRespondersError, PayloadTooLargeError } from "./errors.ts";
import { MSG_ID_HEADER, NatsSubscription, toHeaders } from "./natsMessages.ts";
import { ensureStream, NatsDurableRunner } from "./natsStream.ts";
import { createNatsSharedKv } from "./natsSharedKv.ts";
import type { SharedKv } from "./sharedKv.ts";
import type { LeaseStore } from "./leases.ts";
import { createNatsLeases } from "./natsLeases.ts";
import { createNatsSoulHistory } from "./natsSoulHistory.ts";
import type { SoulHistoryLog } from "./soulHistoryLog.ts";
import { redactSecrets } from "../log/index.ts";
import { assertPublishSubject } from "./subjectMatch.ts";
import { assertName, streamName, streamSubjects } from "./subjects.ts";

export interface NatsBusOptions {
  servers: string | string[];
  cluster: string;
  /** Client name, shown by the server's monitoring. */
  name?: string;
  user?: string;
  pass?: string;
  token?: string;
  /** An NKey user seed (`SU...`); the client signs the server's nonce with it. */
  nkeySeed?: string;
  /** The text of a NATS `.creds` file (user JWT and NKey seed), for servers in operator mode. */
  creds?: string;
  /** Pause between reconnect attempts (default 250 ms; attempts never stop). */
  reconnectTimeWaitMs?: number;
  /** How long a durable publish keeps retrying across outages before it fails (default 60 s). */
  publishTimeoutMs?: number;
  /** Wait for one stream ack before retrying (default 2 s). */
  ackTimeoutMs?: number;
  /** Stream storage (default "file"; "memory" does not survive a server restart). */
  storage?: "file" | "memory";
  /** msgId dedupe window of the stream (default 2 min). */
  duplicateWindowMs?: number;
  /** Stored messages older than this are dropped (default 7 days). */
  streamMaxAgeMs?: number;
  /** Stream size limit in bytes, oldest dropped first (default -1: the server's limits). */
  streamMaxBytes?: number;
  /**
   * Replicas of the cluster stream and the shared-context bucket on a clustered NATS (1..5,
   * `runtime.replicas`). Given, an existing stream with another count is updated to it;
   * undefined (CLI commands), new streams get 1 and existing ones are left as they are.
   */
  replicas?: number;
  onHandlerError?: HandlerErrorReporter;
  /**
   * Prefix for this connection's reply inboxes. With per-user prefixes (see
   * runtime/bus/permissions `inboxPrefixFor`) the server's permissions keep one user from
   * reading another's replies, including perceptions pulled by a node's consumer.
   */
  inboxPrefix?: string;
}


export async function connectNatsBus(opts: NatsBusOptions): Promise<Bus> {
  const cluster = assertName("cluster", opts.cluster);
  const connectOpts: ConnectionOptions = {
    servers: opts.servers,
    maxReconnectAttempts: -1,
    reconnectTimeWait: opts.reconnectTimeWaitMs ?? 250,
    name: opts.name ?? `ensoul-${cluster}`,
    // No stack captured up front for every request and timer: errors here carry their own context.
    noAsyncTraces: true,
  };
  if (opts.user !== undefined) connectOpts.user = opts.user;
  if (opts.pass !== undefined) connectOpts.pass = opts.pass;
  if (opts.token !== undefined) connectOpts.token = opts.token;
  if (opts.inboxPrefix !== undefined) connectOpts.inboxPrefix = opts.inboxPrefix;
  if (opts.nkeySeed !== undefined) connectOpts.authenticator = nkeyAuthenticator(new TextEncoder().encode(opts.nkeySeed));
  if (opts.creds !== undefined) connectOpts.authenticator = credsAuthenticator(new TextEncoder().encode(opts.creds));
  let nc: NatsConnection;
  try {
    nc = await connect(connectOpts);
  } catch (err) {
    // The URL may carry a user and password (nats://alice:s3cret@host): never in a message.
    const where = Array.isArray(opts.servers) ? opts.servers.join(", ") : opts.servers;
    throw new BusError(redactSecrets(`could not connect to NATS at ${where}: ${errorText(err)}`), { cause: err });
  }
  try {
    // A lone nats-server takes `num_replicas: 3` and keeps one copy, silently: said here instead.
    if (opts.replicas !== undefined && opts.replicas > 1 && !nc.info?.cluster) {
      throw new BusError(
        `runtime.replicas is ${opts.replicas}, but the NATS server at ${redactSecrets(Array.isArray(opts.servers) ? opts.servers.join(", ") : opts.servers)} is not part of a cluster ` +
          `and keeps one copy of a stream: set runtime.replicas to 1, or connect to a clustered NATS`,
      );
    }
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, {
      name: streamName(cluster),
      subjects: streamSubjects(cluster),
      storage: opts.storage ?? "file",
      duplicateWindowMs: opts.duplicateWindowMs ?? 120_000,
      maxAgeMs: opts.streamMaxAgeMs ?? 7 * 24 * 3600_000,
      maxBytes: opts.streamMaxBytes ?? -1,
      ...(opts.replicas !== undefined ? { replicas: opts.replicas } : {}),
    });
    return new NatsBus(nc, jetstream(nc), jsm, cluster, opts);
  } catch (err) {
    await nc.close();
    throw err;
  }
}

class NatsBus implements Bus {
  readonly kind = "nats" as const;
  readonly cluster: string;
  readonly closed: Promise<void>;
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly stream: string;
  private readonly streamSubjects: readonly string[];
  private readonly report: HandlerErrorReporter;
  private readonly publishTimeoutMs: number;
  private readonly ackTimeoutMs: number;
  private readonly replicas: number | undefined;
  private readonly subs = new Set<NatsSubscription>();
  private readonly runners = new Set<NatsDurableRunner>();
  private state: BusState = "open";
  private draining: Promise<void> | null = null;
  private connected = true;
  private shared: SharedKv | undefined;
  private history: SoulHistoryLog | undefined;
  /** Resolves at the next reconnect; replaced at each disconnect. */
  private reconnected: Promise<void> = Promise.resolve();

  constructor(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, cluster: string, opts: NatsBusOptions) {
    this.nc = nc;
    this.js = js;
    this.jsm = jsm;
    this.cluster = cluster;
    this.stream = streamName(cluster);
    this.streamSubjects = streamSubjects(cluster);
    this.report = opts.onHandlerError ?? defaultHandlerErrorReporter;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 60_000;
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 2_000;
    this.replicas = opts.replicas;
    this.closed = nc.closed().then(() => {
      this.state = "closed";
    });
    this.watchStatus().catch((err: unknown) => this.report(err, { subject: "(connection status)" }));
  }

  private async watchStatus(): Promise<void> {
    const waiting: { release: () => void } = { release: () => {} };
    try {
      for await (const s of this.nc.status()) {
        if (s.type === "disconnect" && this.connected) {
          this.connected = false;
          this.reconnected = new Promise((resolve) => (waiting.release = resolve));
        } else if (s.type === "reconnect" && !this.connected) {
          this.connected = true;
          waiting.release();
        }
      }
    } finally {
      // The status stream ends when the connection closes (or fails): release anyone waiting to publish.
      waiting.release();
    }
  }

  async publish(subject: string, data: Uint8Array, opts: PublishOptions = {}): Promise<void> {
    assertPublishSubject(subject);
    this.assertOpen();
    if (isStreamSubject(this.streamSubjects, subject)) {
      await this.publishDurable(subject, data, opts);
      return;
    }
    const hdrs = opts.msgId !== undefined ? toHeaders({ ...opts.headers, [MSG_ID_HEADER]: opts.msgId }) : toHeaders(opts.headers);
    try {
      this.nc.publish(subject, data, hdrs ? { headers: hdrs } : undefined);
    } catch (err) {
      throw this.mapError(err, subject, data);
    }
  }

  /** Stored by the stream or rejected: retries across disconnects with one msgId until the deadline. */
  private async publishDurable(subject: string, data: Uint8Array, opts: PublishOptions): Promise<void> {
    const msgID = opts.msgId ?? nextUlid();
    const hdrs = toHeaders(opts.headers);
    const deadline = Date.now() + this.publishTimeoutMs;
    let lastError: unknown = null;
    for (let attempt = 0; ; attempt++) {
      if (this.state === "closed" || this.nc.isClosed()) throw new BusClosedError("bus closed before the stream stored the message", { cause: lastError });
      if (!this.connected) await within(this.reconnected, deadline - Date.now());
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new DurablePublishError(subject, `not stored within ${this.publishTimeoutMs} ms: ${errorText(lastError)}`, { cause: lastError });
      try {
        await this.js.publish(subject, data, { msgID, timeout: Math.min(this.ackTimeoutMs, Math.max(100, remaining)), ...(hdrs ? { headers: hdrs } : {}) });
        return;
      } catch (err) {
        lastError = err;
        if (!isRetryable(err)) throw this.mapError(err, subject, data);
        // A short pause covers a server that is back but whose JetStream is not ready yet;
        // a lost connection is waited for at the top of the loop.
        await sleep(Math.min(1000, 50 * 2 ** attempt, Math.max(0, deadline - Date.now())));
      }
    }
  }

  subscribe(subject: string, opts?: SubscribeOptions): Subscription;
  subscribe(subject: string, handler: MessageHandler, opts?: SubscribeOptions): Subscription;
  subscribe(subject: string, handlerOrOpts?: MessageHandler | SubscribeOptions, maybeOpts?: SubscribeOptions): Subscription {
    const { handler, opts } = subscribeArgs(handlerOrOpts, maybeOpts);
    assertCanSubscribe(this.state, subject, opts.queue);
    const raw = this.nc.subscribe(subject, opts.queue !== undefined ? { queue: opts.queue } : {});
    const sub = new NatsSubscription(raw, subject, opts.queue, handler, this.report, () => this.nc.flush());
    return keepUntilClosed(this.subs, sub);
  }

  async request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    assertRequestSubject(this.streamSubjects, subject);
    this.assertOpen();
    const hdrs = toHeaders(opts.headers);
    try {
      const reply = await this.nc.request(subject, data, { timeout: opts.timeoutMs, ...(hdrs ? { headers: hdrs } : {}) });
      return reply.data;
    } catch (err) {
      if (err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError)) throw new BusTimeoutError(subject, opts.timeoutMs, { cause: err });
      if (err instanceof RequestError && err.isNoResponders()) throw new NoRespondersError(subject, { cause: err });
      throw this.mapError(err, subject, data);
    }
  }

  async durable(subjectFilter: string, consumerName: string, handler: DurableHandler, opts: DurableOptions = {}): Promise<DurableConsumer> {
    assertCanConsume(this.state, this.streamSubjects, subjectFilter, consumerName);
    const runner = await NatsDurableRunner.start(this.js, this.jsm, this.stream, subjectFilter, consumerName, handler, opts, {
      onExhausted: deadLetterExhausted(this),
      report: this.report,
    });
    return keepUntilClosed(this.runners, runner);
  }

  /** The bucket `ensoul_<cluster>_shared` on this connection, opened at its first use (natsSharedKv.ts). */
  soulHistory(): SoulHistoryLog {
    return (this.history ??= createNatsSoulHistory(this.js, this.jsm, this.cluster, {
      maxPayload: () => this.nc.info?.max_payload,
      connected: () => this.connected,
      ...(this.replicas !== undefined ? { replicas: this.replicas } : {}),
    }));
  }

  leases(ttlMs: number): LeaseStore {
    return createNatsLeases(this.js, this.cluster, { ttlMs, ...(this.replicas !== undefined ? { replicas: this.replicas } : {}) });
  }

  sharedKv(): SharedKv {
    return (this.shared ??= createNatsSharedKv(this.js, this.cluster, this.replicas !== undefined ? { replicas: this.replicas } : {}));
  }

  drain(): Promise<void> {
    if (this.state === "closed") return this.closed;
    if (!this.draining) {
      this.state = "draining";
      this.draining = (async () => {
        // Stop intake first and let in-flight handlers finish...
        await stopIntake(this.subs, this.runners);
        // ...then flush what they sent and close.
        if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
        this.state = "closed";
        await this.closed;
      })();
    }
    return this.draining;
  }

  async close(): Promise<void> {
    this.state = "closed";
    await this.nc.close();
    await this.closed;
  }

  private assertOpen(): void {
    if (this.state === "closed" || this.nc.isClosed()) throw new BusClosedError();
  }

  private mapError(err: unknown, subject: string, data: Uint8Array): Error {
    if (err instanceof Error && (err.name === "ClosedConnectionError" || err.name === "DrainingConnectionError")) return new BusClosedError(`bus is closed (${err.message})`, { cause: err });
    if (err instanceof Error && /max_payload|maximum payload|message size exceeds/i.test(err.message)) return new PayloadTooLargeError(data.length, this.nc.info?.max_payload ?? 0);
    if (err instanceof Error) return err instanceof BusError ? err : new BusError(`${subject}: ${err.message}`, { cause: err });
    return new BusError(`${subject}: ${String(err)}`);
  }
}

/** Worth retrying a durable publish: the server or JetStream is (perhaps briefly) unreachable. */
function isRetryable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof TimeoutError) return true;
  if (err instanceof RequestError) return err.isNoResponders() || err.cause instanceof TimeoutError;
  if (err.name === "JetStreamNotEnabled" || err.name === "ConnectionError") return true;
  return false;
}

function errorText(err: unknown): string {
  if (err === null || err === undefined) return "no attempt completed";
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for `p` or `ms`, whichever is first, without leaving a long timer behind to hold the process open. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}
