/**
 * The embedded bus: everything in one process, no server. It routes exactly as a NATS
 * server would (`*` one token, `>` the rest, queue groups, request/reply with
 * no-responders), so code written against it moves to NATS unchanged; the shared contract
 * suite checks that. The durable stream is kept in memory only (memoryStream.ts): it
 * survives a consumer stopping and starting, not the process.
 */
import { randomBytes } from "node:crypto";
import {
  defaultHandlerErrorReporter,
  subscribeArgs,
  type Bus,
  type BusHeaders,
  type BusMessage,
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
import { assertCanConsume, assertCanSubscribe, assertRequestSubject, deadLetterExhausted, keepUntilClosed, stopIntake, type BusState } from "./busGuards.ts";
import { BusClosedError, BusTimeoutError, NoRespondersError, PayloadTooLargeError } from "./errors.ts";
import { LocalSubscription } from "./localSubscription.ts";
import { createMemorySharedKv } from "./memorySharedKv.ts";
import type { SharedKv } from "./sharedKv.ts";
import { MemoryConsumerRunner, MemoryStream } from "./memoryStream.ts";
import { assertPublishSubject, subjectMatches } from "./subjectMatch.ts";
import { assertName, streamSubjects } from "./subjects.ts";

export interface InProcessBusOptions {
  /** Cluster namespace (default "local"). */
  cluster?: string;
  /** Largest payload accepted, like a NATS server's max_payload (default 1 MiB). */
  maxPayload?: number;
  /** msgId dedupe window of the stream (default 2 min, as on NATS). */
  duplicateWindowMs?: number;
  /** Stored messages older than this are dropped (default 24 h). */
  streamMaxAgeMs?: number;
  /** The stream drops its oldest messages beyond this many bytes (default 256 MiB). */
  streamMaxBytes?: number;
  onHandlerError?: HandlerErrorReporter;
}

interface PendingRequest {
  resolve(data: Uint8Array): void;
  reject(err: Error): void;
}

export function createInProcessBus(opts: InProcessBusOptions = {}): Bus {
  return new InProcessBus(opts);
}

class InProcessBus implements Bus {
  readonly kind = "in-process" as const;
  readonly cluster: string;
  readonly closed: Promise<void>;
  private readonly maxPayload: number;
  private readonly report: HandlerErrorReporter;
  private readonly stream: MemoryStream;
  private readonly streamSubjects: readonly string[];
  private readonly subs = new Set<LocalSubscription>();
  private readonly roundRobin = new Map<string, number>();
  private readonly requests = new Map<string, PendingRequest>();
  private readonly runners = new Set<MemoryConsumerRunner>();
  private readonly inboxPrefix = `_INBOX.${randomBytes(8).toString("hex")}`;
  private inboxSeq = 0;
  private state: BusState = "open";
  private draining: Promise<void> | null = null;
  private resolveClosed!: () => void;
  private shared: SharedKv | undefined;

  constructor(opts: InProcessBusOptions) {
    this.cluster = assertName("cluster", opts.cluster ?? "local");
    this.maxPayload = opts.maxPayload ?? 1024 * 1024;
    this.report = opts.onHandlerError ?? defaultHandlerErrorReporter;
    this.streamSubjects = streamSubjects(this.cluster);
    this.stream = new MemoryStream({
      subjects: this.streamSubjects,
      duplicateWindowMs: opts.duplicateWindowMs ?? 120_000,
      maxAgeMs: opts.streamMaxAgeMs ?? 24 * 3600_000,
      maxBytes: opts.streamMaxBytes ?? 256 * 1024 * 1024,
    });
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  async publish(subject: string, data: Uint8Array, opts: PublishOptions = {}): Promise<void> {
    assertPublishSubject(subject);
    this.assertOpen();
    this.assertSize(data);
    // As on NATS, where the msgId travels as the Nats-Msg-Id header.
    const headers = opts.msgId !== undefined ? { ...opts.headers, "Nats-Msg-Id": opts.msgId } : opts.headers ? { ...opts.headers } : undefined;
    this.route(subject, data, headers, undefined);
    if (this.stream.captures(subject)) this.stream.append(subject, data.slice(), headers, opts.msgId);
  }

  subscribe(subject: string, opts?: SubscribeOptions): Subscription;
  subscribe(subject: string, handler: MessageHandler, opts?: SubscribeOptions): Subscription;
  subscribe(subject: string, handlerOrOpts?: MessageHandler | SubscribeOptions, maybeOpts?: SubscribeOptions): Subscription {
    const { handler, opts } = subscribeArgs(handlerOrOpts, maybeOpts);
    assertCanSubscribe(this.state, subject, opts.queue);
    const sub = new LocalSubscription(subject, opts.queue, handler, this.report, (s) => this.subs.delete(s));
    this.subs.add(sub);
    return sub;
  }

  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    try {
      assertRequestSubject(this.streamSubjects, subject);
      this.assertOpen();
      this.assertSize(data);
    } catch (err) {
      return Promise.reject(err);
    }
    const inbox = `${this.inboxPrefix}.${++this.inboxSeq}`;
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.requests.delete(inbox);
        reject(new BusTimeoutError(subject, opts.timeoutMs));
      }, opts.timeoutMs);
      const settle = <T>(fn: (v: T) => void) => (v: T) => {
        clearTimeout(timer);
        this.requests.delete(inbox);
        fn(v);
      };
      this.requests.set(inbox, { resolve: settle(resolve), reject: settle(reject) });
      const delivered = this.route(subject, data, opts.headers ? { ...opts.headers } : undefined, inbox);
      // NATS answers a request nobody listens to with a no-responders status at once.
      if (delivered === 0) setImmediate(() => this.requests.get(inbox)?.reject(new NoRespondersError(subject)));
    });
  }

  async durable(subjectFilter: string, consumerName: string, handler: DurableHandler, opts: DurableOptions = {}): Promise<DurableConsumer> {
    assertCanConsume(this.state, this.streamSubjects, subjectFilter, consumerName);
    const state = this.stream.consumer(consumerName, subjectFilter, opts.deliver ?? "all");
    const runner = new MemoryConsumerRunner(this.stream, state, handler, opts, { onExhausted: deadLetterExhausted(this), report: this.report });
    return keepUntilClosed(this.runners, runner);
  }

  /** Every node on this bus shares it, as nodes on one NATS share the bucket. */
  sharedKv(): SharedKv {
    return (this.shared ??= createMemorySharedKv(this.cluster));
  }

  drain(): Promise<void> {
    if (this.state === "closed") return this.closed;
    if (!this.draining) {
      this.state = "draining";
      this.draining = (async () => {
        await stopIntake(this.subs, this.runners);
        this.shutDown();
      })();
    }
    return this.draining;
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    for (const sub of [...this.subs]) sub.unsubscribe();
    for (const runner of [...this.runners]) runner.abort();
    this.shutDown();
  }

  private shutDown(): void {
    this.state = "closed";
    for (const pending of [...this.requests.values()]) pending.reject(new BusClosedError("bus closed before the reply arrived"));
    this.resolveClosed();
  }

  /** Hands a message to every matching subscriber (one per queue group); returns how many got it. */
  private route(subject: string, data: Uint8Array, headers: BusHeaders | undefined, reply: string | undefined): number {
    const pending = this.requests.get(subject);
    if (pending) {
      const copy = data.slice();
      setImmediate(() => pending.resolve(copy));
    }
    let delivered = pending ? 1 : 0;
    const groups = new Map<string, LocalSubscription[]>();
    for (const sub of this.subs) {
      if (!sub.accepting || !subjectMatches(sub.subject, subject)) continue;
      if (sub.queue === undefined) {
        sub.push(this.message(subject, data, headers, reply));
        delivered++;
      } else {
        const members = groups.get(sub.queue);
        if (members) members.push(sub);
        else groups.set(sub.queue, [sub]);
      }
    }
    for (const [queue, members] of groups) {
      const turn = this.roundRobin.get(queue) ?? 0;
      this.roundRobin.set(queue, turn + 1);
      members[turn % members.length].push(this.message(subject, data, headers, reply));
      delivered++;
    }
    return delivered;
  }

  private message(subject: string, data: Uint8Array, headers: BusHeaders | undefined, reply: string | undefined): BusMessage {
    const msg: { -readonly [K in keyof BusMessage]: BusMessage[K] } = {
      subject,
      // Each subscriber gets its own copy, as it would off the wire.
      data: data.slice(),
      respond: (replyData, replyOpts) => {
        if (reply === undefined || this.state === "closed") return false;
        if (replyData.length > this.maxPayload) return false;
        this.route(reply, replyData, replyOpts?.headers ? { ...replyOpts.headers } : undefined, undefined);
        return true;
      },
    };
    if (reply !== undefined) msg.reply = reply;
    if (headers) msg.headers = headers;
    return msg;
  }

  private assertOpen(): void {
    if (this.state === "closed") throw new BusClosedError();
  }

  private assertSize(data: Uint8Array): void {
    if (!(data instanceof Uint8Array)) throw new TypeError("bus payloads are Uint8Array");
    if (data.length > this.maxPayload) throw new PayloadTooLargeError(data.length, this.maxPayload);
  }
}
