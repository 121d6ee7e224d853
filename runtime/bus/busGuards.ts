/**
 * What both buses (in-process and NATS) check and do the same way, so that they refuse the
 * same calls with the same errors and wind down in the same order; the shared contract suite
 * relies on that.
 */
import type { Bus, DurableMessage } from "./Bus.ts";
import { deadLetter } from "./dead.ts";
import { BusClosedError, InvalidSubjectError, NotDurableSubjectError } from "./errors.ts";
import { assertPublishSubject, assertSubscribeSubject, subjectContains, subjectMatches } from "./subjectMatch.ts";
import { assertName } from "./subjects.ts";

export type BusState = "open" | "draining" | "closed";

function assertTakesNew(state: BusState, what: "subscriptions" | "consumers"): void {
  if (state !== "open") throw new BusClosedError(state === "draining" ? `bus is draining: no new ${what}` : "bus is closed");
}

/** A subject the cluster stream captures (a durable subject). */
export function isStreamSubject(streamSubjects: readonly string[], subject: string): boolean {
  return streamSubjects.some((p) => subjectMatches(p, subject));
}

/** Before a new subscription: a subscribable subject, a valid queue name, and an open bus. */
export function assertCanSubscribe(state: BusState, subject: string, queue: string | undefined): void {
  assertSubscribeSubject(subject);
  if (queue !== undefined) assertName("queue", queue);
  assertTakesNew(state, "subscriptions");
}

/** Before a request: a publishable subject outside the stream (the stream itself would answer). */
export function assertRequestSubject(streamSubjects: readonly string[], subject: string): void {
  assertPublishSubject(subject);
  if (isStreamSubject(streamSubjects, subject)) {
    throw new InvalidSubjectError(subject, "requests are not allowed on stream subjects (the stream itself would answer)");
  }
}

/** Before a new durable consumer: a valid filter and name, an open bus, and a filter within the stream. */
export function assertCanConsume(state: BusState, streamSubjects: readonly string[], subjectFilter: string, consumerName: string): void {
  assertSubscribeSubject(subjectFilter);
  assertName("consumerName", consumerName);
  assertTakesNew(state, "consumers");
  if (!streamSubjects.some((s) => subjectContains(s, subjectFilter))) throw new NotDurableSubjectError(subjectFilter, streamSubjects);
}

/** A durable message whose last allowed delivery failed goes to the bus's dead subject, with the error as its reason; resolves to whether that record was written. */
export function deadLetterExhausted(bus: Bus): (msg: DurableMessage, err: unknown) => Promise<boolean> {
  return (msg, err) => {
    const reason = `handler failed on delivery ${msg.deliveryCount}, the last one allowed: ${err instanceof Error ? err.message : String(err)}`;
    return deadLetter(bus, bus.cluster, { subject: msg.subject, reason, data: msg.data });
  };
}

/** Stops intake and lets in-flight handlers finish (they may still publish, respond and ack). */
export async function stopIntake(subs: Iterable<{ drain(): Promise<void> }>, runners: Iterable<{ stop(): Promise<void> }>): Promise<void> {
  await Promise.all([...[...subs].map((s) => s.drain()), ...[...runners].map((r) => r.stop())]);
}

/** Keeps `item` in `set` (what drain and close must stop) until it has closed; returns it. */
export function keepUntilClosed<T extends { readonly closed: Promise<void> }>(set: Set<T>, item: T): T {
  set.add(item);
  const forget = () => void set.delete(item);
  item.closed.then(forget, forget);
  return item;
}
