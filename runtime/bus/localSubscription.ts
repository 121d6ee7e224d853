/**
 * One in-process subscription: a mailbox in front of a handler or an async iterator.
 * Messages are queued and handed over later (never inside the publisher's call, so a
 * handler that publishes cannot re-enter itself), one at a time and in arrival order.
 */
import { BusError } from "./errors.ts";
import type { BusMessage, HandlerErrorReporter, MessageHandler, Subscription } from "./Bus.ts";

type State = "open" | "draining" | "closed";

export class LocalSubscription implements Subscription {
  readonly subject: string;
  readonly queue?: string;
  readonly closed: Promise<void>;
  private readonly handler: MessageHandler | undefined;
  private readonly report: HandlerErrorReporter;
  private readonly onEnd: (sub: LocalSubscription) => void;
  private buffer: BusMessage[] = [];
  private waiters: Array<(r: IteratorResult<BusMessage>) => void> = [];
  private state: State = "open";
  private pumping = false;
  private ended = false;
  private resolveClosed!: () => void;

  constructor(subject: string, queue: string | undefined, handler: MessageHandler | undefined, report: HandlerErrorReporter, onEnd: (sub: LocalSubscription) => void) {
    this.subject = subject;
    if (queue !== undefined) this.queue = queue;
    this.handler = handler;
    this.report = report;
    this.onEnd = onEnd;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  /** Nothing refuses a subscription in one process. */
  accepted(): Promise<void> {
    return Promise.resolve();
  }

  /** Whether new messages are still taken (a draining subscription only finishes what it has). */
  get accepting(): boolean {
    return this.state === "open";
  }

  push(msg: BusMessage): void {
    if (this.state !== "open") return;
    if (this.handler) {
      this.buffer.push(msg);
      this.schedulePump();
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: msg, done: false });
    else this.buffer.push(msg);
  }

  unsubscribe(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.buffer = [];
    this.releaseWaiters();
    if (!this.pumping) this.finish();
  }

  /** Takes no more messages; what is queued is still handled (or still iterable). */
  drain(): Promise<void> {
    if (this.state === "open") {
      this.state = "draining";
      // An iterator's reader decides when it is done; drain cannot wait on it.
      if (!this.handler || (!this.pumping && this.buffer.length === 0)) {
        if (this.buffer.length === 0) this.releaseWaiters();
        this.finish();
      }
    }
    return this.closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<BusMessage> {
    if (this.handler) throw new BusError(`subscription on ${this.subject} has a handler; it cannot also be iterated`);
    return {
      next: () => {
        const msg = this.buffer.shift();
        if (msg) return Promise.resolve({ value: msg, done: false });
        if (this.state !== "open") return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
      return: () => {
        this.unsubscribe();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private schedulePump(): void {
    if (this.pumping) return;
    this.pumping = true;
    setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    const handler = this.handler as MessageHandler;
    while (this.buffer.length > 0 && this.state !== "closed") {
      const msg = this.buffer.shift() as BusMessage;
      try {
        await handler(msg);
      } catch (err) {
        this.report(err, { subject: this.subject });
      }
    }
    this.pumping = false;
    if (this.state !== "open") this.finish();
  }

  private releaseWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w({ value: undefined, done: true });
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(this);
    this.resolveClosed();
  }
}
