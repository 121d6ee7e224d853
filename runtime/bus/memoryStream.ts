/**
 * The in-process bus's stand-in for the JetStream cluster stream: an in-memory log of the
 * durable subjects, msgId dedupe within a window, and named consumers that remember their
 * position and their unacked messages. It has the stream's delivery semantics (at least
 * once, ack by returning, redelivery after a throw or an abandoned delivery) but NO
 * persistence: it lives and dies with its bus. Durability across process restarts needs
 * the NATS bus.
 */
import type { BusHeaders, DurableConsumer, DurableHandler, DurableMessage, DurableOptions } from "./Bus.ts";
import { BusError } from "./errors.ts";
import { subjectMatches } from "./subjectMatch.ts";

export interface MemoryStreamLimits {
  /** Stream subjects (wildcards allowed). */
  subjects: readonly string[];
  duplicateWindowMs: number;
  maxAgeMs: number;
  maxBytes: number;
}

interface Stored {
  seq: number;
  subject: string;
  data: Uint8Array;
  headers?: BusHeaders;
  ts: number;
}

interface Pending {
  deliveries: number;
  dueAt: number;
  inFlight: boolean;
}

interface ConsumerState {
  name: string;
  filter: string;
  /** Next stream sequence not yet delivered. */
  cursor: number;
  pending: Map<number, Pending>;
  wakers: Set<() => void>;
}

export class MemoryStream {
  private readonly limits: MemoryStreamLimits;
  private log: Stored[] = [];
  private bytes = 0;
  private lastSeq = 0;
  private readonly dedupe = new Map<string, number>();
  private readonly consumers = new Map<string, ConsumerState>();

  constructor(limits: MemoryStreamLimits) {
    this.limits = limits;
  }

  captures(subject: string): boolean {
    return this.limits.subjects.some((p) => subjectMatches(p, subject));
  }

  append(subject: string, data: Uint8Array, headers: BusHeaders | undefined, msgId: string | undefined, now = Date.now()): { seq: number; duplicate: boolean } {
    this.expire(now);
    if (msgId !== undefined) {
      if (this.dedupe.has(msgId)) return { seq: 0, duplicate: true };
      this.dedupe.set(msgId, now + this.limits.duplicateWindowMs);
    }
    const stored: Stored = { seq: ++this.lastSeq, subject, data, ts: now };
    if (headers) stored.headers = headers;
    this.log.push(stored);
    this.bytes += data.length;
    while (this.bytes > this.limits.maxBytes && this.log.length > 1) this.dropOldest();
    for (const c of this.consumers.values()) if (subjectMatches(c.filter, subject)) wake(c);
    return { seq: stored.seq, duplicate: false };
  }

  consumer(name: string, filter: string, deliver: "all" | "new"): ConsumerState {
    const existing = this.consumers.get(name);
    if (existing) {
      if (existing.filter !== filter) throw new BusError(`durable consumer ${name} already exists with filter ${existing.filter}, not ${filter}`);
      return existing;
    }
    const first = this.log[0]?.seq ?? this.lastSeq + 1;
    const state: ConsumerState = { name, filter, cursor: deliver === "all" ? first : this.lastSeq + 1, pending: new Map(), wakers: new Set() };
    this.consumers.set(name, state);
    return state;
  }

  /** The next message for a consumer: a due redelivery first, then the next new one. */
  take(c: ConsumerState, now = Date.now()): { msg: Stored; deliveries: number } | null {
    this.expire(now);
    const firstSeq = this.log[0]?.seq ?? this.lastSeq + 1;
    let due: number | null = null;
    for (const [seq, p] of c.pending) {
      if (seq < firstSeq) c.pending.delete(seq); // aged out of the stream before it was acked
      else if (!p.inFlight && p.dueAt <= now && (due === null || seq < due)) due = seq;
    }
    if (due !== null) {
      const p = c.pending.get(due) as Pending;
      p.deliveries++;
      p.inFlight = true;
      return { msg: this.log[due - firstSeq], deliveries: p.deliveries };
    }
    for (let seq = Math.max(c.cursor, firstSeq); seq <= this.lastSeq; seq++) {
      const msg = this.log[seq - firstSeq];
      c.cursor = seq + 1;
      if (subjectMatches(c.filter, msg.subject)) {
        c.pending.set(seq, { deliveries: 1, dueAt: 0, inFlight: true });
        return { msg, deliveries: 1 };
      }
    }
    return null;
  }

  ack(c: ConsumerState, seq: number): void {
    c.pending.delete(seq);
  }

  /** Puts a delivered message back, to be delivered again at `dueAt`. */
  release(c: ConsumerState, seq: number, dueAt: number): void {
    const p = c.pending.get(seq);
    if (!p) return;
    p.inFlight = false;
    p.dueAt = dueAt;
    wake(c);
  }

  /** Earliest time a released message becomes due, for a consumer with nothing to do now. */
  nextDue(c: ConsumerState): number | null {
    let next: number | null = null;
    for (const p of c.pending.values()) if (!p.inFlight && (next === null || p.dueAt < next)) next = p.dueAt;
    return next;
  }

  private expire(now: number): void {
    for (const [id, until] of this.dedupe) {
      if (until > now) break; // insertion order is expiry order
      this.dedupe.delete(id);
    }
    while (this.log.length > 0 && this.log[0].ts + this.limits.maxAgeMs <= now) this.dropOldest();
  }

  private dropOldest(): void {
    const dropped = this.log.shift();
    if (dropped) this.bytes -= dropped.data.length;
  }
}

function wake(c: ConsumerState): void {
  for (const w of c.wakers) w();
}

export interface RunnerHooks {
  /**
   * Called when a message failed its last allowed delivery; resolves to whether its dead
   * letter was written. Only then is it acked: otherwise it is released for redelivery.
   */
  onExhausted(msg: DurableMessage, err: unknown): Promise<boolean>;
  report(err: unknown, ctx: { subject: string; consumer: string }): void;
}

/**
 * One running instance of a consumer: takes a message, awaits the handler, acks or
 * releases it, repeats. Several runners may share a consumer (like several clients on one
 * JetStream pull consumer); each message goes to one of them.
 */
export class MemoryConsumerRunner implements DurableConsumer {
  readonly name: string;
  readonly filter: string;
  readonly closed: Promise<void>;
  private readonly stream: MemoryStream;
  private readonly state: ConsumerState;
  private readonly handler: DurableHandler;
  private readonly opts: Required<Pick<DurableOptions, "maxDeliver" | "retryDelayMs">>;
  private readonly hooks: RunnerHooks;
  private stopping = false;
  private aborted = false;
  private inFlight: number | null = null;
  private wakeUp: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(stream: MemoryStream, state: ConsumerState, handler: DurableHandler, opts: DurableOptions, hooks: RunnerHooks) {
    this.name = state.name;
    this.filter = state.filter;
    this.stream = stream;
    this.state = state;
    this.handler = handler;
    this.opts = { maxDeliver: opts.maxDeliver ?? 5, retryDelayMs: opts.retryDelayMs ?? 200 };
    this.hooks = hooks;
    const waker = () => this.wakeUp?.();
    state.wakers.add(waker);
    this.closed = this.loop().finally(() => {
      state.wakers.delete(waker);
      if (this.timer) clearTimeout(this.timer);
    });
  }

  stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    return this.closed;
  }

  /** Like a crash: the in-flight message is not acked and becomes due again at once. */
  abort(): void {
    this.aborted = true;
    if (this.inFlight !== null) this.stream.release(this.state, this.inFlight, Date.now());
    // Nobody waits for an aborted consumer: its loop ending badly must not be an unhandled rejection.
    this.stop().catch(() => undefined);
  }

  private async loop(): Promise<void> {
    // Start on a later tick: delivery is never inside the caller's `durable()` call.
    await new Promise((r) => setImmediate(r));
    while (!this.stopping) {
      const next = this.stream.take(this.state);
      if (!next) {
        await this.idle();
        continue;
      }
      const { msg, deliveries } = next;
      this.inFlight = msg.seq;
      const delivered: DurableMessage = {
        subject: msg.subject,
        data: msg.data.slice(),
        ...(msg.headers ? { headers: msg.headers } : {}),
        seq: msg.seq,
        deliveryCount: deliveries,
        redelivered: deliveries > 1,
      };
      try {
        await this.handler(delivered);
        if (!this.aborted) this.stream.ack(this.state, msg.seq);
      } catch (err) {
        if (this.aborted) break;
        this.hooks.report(err, { subject: msg.subject, consumer: this.name });
        // Ended only with its dead letter written: a message whose failure was not recorded
        // anywhere would vanish, so it comes back, as after any failed delivery.
        const ended = deliveries >= this.opts.maxDeliver && (await this.hooks.onExhausted(delivered, err).catch(() => false));
        if (ended) this.stream.ack(this.state, msg.seq);
        else this.stream.release(this.state, msg.seq, Date.now() + backoff(this.opts.retryDelayMs, deliveries));
      }
      this.inFlight = null;
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const due = this.stream.nextDue(this.state);
      const done = () => {
        this.wakeUp = null;
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        resolve();
      };
      this.wakeUp = done;
      if (due !== null) this.timer = setTimeout(done, Math.max(0, due - Date.now()));
    });
  }
}

/** Redelivery delay after the n-th failed delivery: linear growth, capped at 30 s. */
export function backoff(baseMs: number, deliveries: number): number {
  return Math.min(30_000, baseMs * deliveries);
}
