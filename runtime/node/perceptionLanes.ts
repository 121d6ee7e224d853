/**
 * The in-flight side of a node's JetStream perception source (perceptionSources.ts says why
 * it pulls itself): up to `maxInFlight` messages are handled at once, across souls, while each
 * soul's messages go through one lane, in stream order. A message is acked once the intake
 * has written it to the soul's inbox, or, when the intake answers `{ ackAfter }` (a soul holds
 * it unwritten until its turn commits), once that resolves; the lane and the slot are freed at
 * once. A soul with no room parks its lane, which gives up its slots meanwhile. Messages taken
 * and not finished are kept alive with +WPI, and `drained` waits for all of them.
 *
 * The order of a soul's perceptions and speech is kept at five points; docs/ARCHITECTURE.md
 * ("The order of a soul's perceptions and speech") says how they relate. The lanes are one.
 */
import type { JsMsg } from "@nats-io/jetstream";
import { deadLetter, parseSubject, type Bus } from "../bus/index.ts";
import { atFaultPoint } from "../faults/index.ts";
import { whenRoom, type SourceOptions } from "./perceptionSources.ts";

export interface LaneOptions extends SourceOptions {
  bus: Bus;
  /** Perceptions in flight at once, across souls. */
  maxInFlight: number;
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

/** A message action on a connection that may be gone: the server then redelivers after ack_wait, which is what a crash means. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // the connection is gone
  }
}

/**
 * The acknowledgement of a perception the node is done with (fault point `perception.ack`).
 * Lost, the server delivers the message again after ack_wait, and the inbox knows it.
 */
function ack(m: JsMsg): void {
  const detail = { soulId: parseSubject(m.subject)?.id ?? undefined, id: m.headers?.get("Nats-Msg-Id") || undefined, seq: m.seq, delivery: m.info.deliveryCount };
  void atFaultPoint("perception.ack", () => safely(() => m.ack()), detail).catch(() => undefined);
}

export class PerceptionLanes {
  private readonly lanes = new Map<string, Lane>();
  /** Taken and not finished, in a lane (waiting for room or not): kept alive, awaited by `drained`. */
  private readonly inFlight = new Set<InFlight>();
  /** Of those, the ones holding a slot (`maxInFlight`): those whose lane is not parked. */
  private active = 0;
  /** Handed to a soul that holds them until its turn commits: no slot, but kept alive and awaited by `drained`. */
  private readonly held = new Map<InFlight, Promise<void>>();
  private stopping = false;
  private handBack!: () => void;
  private readonly stopAsked = new Promise<void>((resolve) => (this.handBack = resolve));
  private slotFreed: (() => void) | null = null;
  private readonly keepAlive: ReturnType<typeof setInterval>;
  private readonly maxDeliver: number;
  private readonly retryDelayMs: number;

  constructor(private readonly o: LaneOptions) {
    this.maxDeliver = o.maxDeliver ?? 5;
    this.retryDelayMs = o.retryDelayMs ?? 200;
    // A slow perception (a soul activating from a large LMDB state) is not a crashed one.
    this.keepAlive = setInterval(() => this.keepWorking(), Math.max(50, Math.floor(o.ackWaitMs / 2)));
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** Resolves once a message may be taken without going past `maxInFlight`. */
  async slot(): Promise<void> {
    while (this.active >= this.o.maxInFlight) await new Promise<void>((resolve) => (this.slotFreed = resolve));
  }

  /** Queues the message in its soul's lane. */
  dispatch(m: JsMsg): void {
    const key = parseSubject(m.subject)?.id ?? m.subject;
    const entry: InFlight = { msg: m, startedAt: Date.now() };
    this.inFlight.add(entry);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { tail: Promise.resolve(), failed: false, size: 0, parked: false };
      this.lanes.set(key, lane);
    }
    const current = lane;
    current.size++;
    if (!current.parked) this.active++;
    const tail = current.tail.then(() => this.handleOne(entry, current));
    current.tail = tail;
    const finished = () => {
      this.inFlight.delete(entry);
      current.size--;
      if (!current.parked) this.active--;
      if (current.tail === tail && this.lanes.get(key) === current) this.lanes.delete(key);
      this.wakeSlot();
    };
    // handleOne settles every outcome itself: the tail never rejects, and either way the lane is freed.
    tail.then(finished, finished);
  }

  /** Messages taken from now on are handed back, and lanes waiting for room give up. */
  stop(): void {
    this.stopping = true;
    this.handBack();
  }

  /** Resolves once every message taken is finished (acked, handed back or dead-lettered). */
  async drained(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((l) => l.tail));
    while (this.held.size > 0) await Promise.all([...this.held.values()]);
    clearInterval(this.keepAlive);
  }

  private keepWorking(): void {
    const now = Date.now();
    for (const f of [...this.inFlight, ...this.held.keys()]) if (now - f.startedAt > this.o.ackWaitMs / 3) safely(() => f.msg.working());
  }

  private wakeSlot(): void {
    const wake = this.slotFreed;
    this.slotFreed = null;
    wake?.();
  }

  private backoff(deliveries: number): number {
    return Math.min(30_000, this.retryDelayMs * deliveries);
  }

  private async handleOne(entry: InFlight, lane: Lane): Promise<void> {
    const m = entry.msg;
    const deliveries = m.info.deliveryCount;
    if (lane.failed) {
      safely(() => m.nak(this.backoff(deliveries)));
      return;
    }
    try {
      const taken = await whenRoom(this.o, m.subject, () => this.o.handler(m.subject, m.data), (room) => this.parkUntil(lane, room));
      if (!taken) {
        // Stopping while its soul had no room: handed back unprocessed, for the next start.
        lane.failed = true;
        safely(() => m.nak());
        return;
      }
      const outcome = taken.value;
      if (outcome) this.ackWhen(entry, outcome.ackAfter);
      else ack(m);
    } catch (err) {
      lane.failed = true;
      await this.failed(m, deliveries, err);
    }
  }

  /** +TERM only with its dead letter written: otherwise the perception would vanish, so it comes back instead. */
  private async failed(m: JsMsg, deliveries: number, err: unknown): Promise<void> {
    this.o.report(err, `perception ${m.seq} on ${m.subject} (delivery ${deliveries})`);
    const reason = `handler failed on delivery ${deliveries}, the last one allowed: ${err instanceof Error ? err.message : String(err)}`;
    const ended = deliveries >= this.maxDeliver && (await deadLetter(this.o.bus, this.o.bus.cluster, { subject: m.subject, reason, data: m.data }));
    if (ended) safely(() => m.term());
    else safely(() => m.nak(this.backoff(deliveries)));
  }

  private ackWhen(entry: InFlight, ackAfter: Promise<void>): void {
    const m = entry.msg;
    const settled = ackAfter.then(
      () => ack(m),
      (err: unknown) => {
        // The soul stopped before processing it: the server delivers it again (here after a restart, or to a twin).
        if (!this.stopping) this.o.report(err, `perception ${m.seq} on ${m.subject} handed back`);
        safely(() => m.nak(this.backoff(m.info.deliveryCount)));
      },
    );
    this.held.set(entry, settled);
    const forget = () => void this.held.delete(entry);
    settled.then(forget, forget);
  }

  /** The soul is full: the lane gives up its slots until it has room (or the source stops: false). */
  private async parkUntil(lane: Lane, room: Promise<void>): Promise<boolean> {
    if (this.stopping) return false;
    lane.parked = true;
    this.active -= lane.size;
    this.wakeSlot();
    try {
      await Promise.race([room, this.stopAsked]);
    } finally {
      lane.parked = false;
      this.active += lane.size;
    }
    return !this.stopping;
  }
}
