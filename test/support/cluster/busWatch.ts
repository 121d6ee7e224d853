/**
 * Watching a cluster from a test: every envelope on a subject, every dead letter, with
 * waits that fail with a message saying what never came.
 */
import { decodeDeadLetter, decodeEnvelope, isKind, type Bus, type DeadLetter, type Envelope, type EnvelopeKind, type Subscription } from "../../../runtime/bus/index.ts";

/** Waits for the condition; `what` names it in the timeout's error (a function: read at the timeout, with what is known then). */
export async function until(condition: () => boolean, ms: number, what: string | (() => string)): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === "function" ? what() : what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface Watch<T> {
  readonly seen: T[];
  /** Resolves with the first item (already seen or still to come) that matches. */
  next(match: (item: T) => boolean, ms?: number, what?: string): Promise<T>;
  stop(): void;
}

function watchWith<T>(sub: (push: (item: T) => void) => Subscription): Watch<T> {
  const seen: T[] = [];
  const s = sub((item) => seen.push(item));
  return {
    seen,
    async next(match, ms = 10_000, what = "a matching message") {
      let found: T | undefined;
      await until(() => (found = seen.find(match)) !== undefined, ms, what);
      return found as T;
    },
    stop: () => s.unsubscribe(),
  };
}

/** Valid envelopes of one kind on a subject (wildcards allowed). */
export function watchEnvelopes<K extends EnvelopeKind>(bus: Bus, subject: string, kind: K): Watch<Extract<Envelope, { kind: K }> & { subject: string }> {
  return watchWith((push) =>
    bus.subscribe(subject, (msg) => {
      const d = decodeEnvelope(msg.data);
      if (d.ok && isKind(d.envelope, kind)) push({ ...d.envelope, subject: msg.subject } as Extract<Envelope, { kind: K }> & { subject: string });
    }),
  );
}

export function watchDead(bus: Bus, subject: string): Watch<DeadLetter> {
  return watchWith((push) =>
    bus.subscribe(subject, (msg) => {
      const d = decodeDeadLetter(msg.data);
      if (d) push(d);
    }),
  );
}
