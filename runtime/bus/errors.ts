/**
 * Bus errors. Both bus implementations throw these same classes, so callers (the gate
 * chain, bridges, the node) can handle a timeout or a missing responder without knowing
 * whether NATS or the in-process bus is underneath.
 */

export class BusError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A name (cluster, soul id, skill, node id, verb) that is not a subject token. */
export class InvalidNameError extends BusError {
  readonly field: string;
  readonly value: unknown;
  constructor(field: string, value: unknown, reason: string) {
    super(`invalid ${field} ${describeValue(value)}: ${reason}`);
    this.field = field;
    this.value = value;
  }
}

/** A subject that is not valid for the operation (empty token, wildcard in a publish, ...). */
export class InvalidSubjectError extends BusError {
  readonly subject: string;
  constructor(subject: string, reason: string) {
    super(`invalid subject ${describeValue(subject)}: ${reason}`);
    this.subject = subject;
  }
}

/** A request got no reply within its timeout. */
export class BusTimeoutError extends BusError {
  readonly subject: string;
  readonly timeoutMs: number;
  constructor(subject: string, timeoutMs: number, options?: ErrorOptions) {
    super(`request on ${subject} timed out after ${timeoutMs} ms`, options);
    this.subject = subject;
    this.timeoutMs = timeoutMs;
  }
}

/** A request found nobody subscribed to its subject; fails at once instead of waiting out the timeout. */
export class NoRespondersError extends BusError {
  readonly subject: string;
  constructor(subject: string, options?: ErrorOptions) {
    super(`no responders on ${subject}`, options);
    this.subject = subject;
  }
}

/** The server refused a subscription (a user whose permissions do not allow the subject). */
export class SubscriptionRefusedError extends BusError {
  readonly subject: string;
  constructor(subject: string, reason: string, options?: ErrorOptions) {
    super(`the server refused the subscription to ${subject} (${reason})`, options);
    this.subject = subject;
  }
}

/** The bus was drained or closed; it accepts no more work. */
export class BusClosedError extends BusError {
  constructor(what = "bus is closed", options?: ErrorOptions) {
    super(what, options);
  }
}

/** A payload larger than the bus (or server) accepts. */
export class PayloadTooLargeError extends BusError {
  readonly size: number;
  readonly limit: number;
  constructor(size: number, limit: number) {
    super(`payload of ${size} bytes exceeds the limit of ${limit} bytes`);
    this.size = size;
    this.limit = limit;
  }
}

/** A durable publish that could not be stored (after retrying until its deadline). */
export class DurablePublishError extends BusError {
  readonly subject: string;
  constructor(subject: string, reason: string, options?: ErrorOptions) {
    super(`durable publish on ${subject} failed: ${reason}`, options);
    this.subject = subject;
  }
}

/** A durable consumer asked for a subject that no stream of this cluster captures. */
export class NotDurableSubjectError extends BusError {
  readonly subject: string;
  constructor(subject: string, captured: readonly string[]) {
    super(`subject ${describeValue(subject)} is not captured by the cluster stream (it captures ${captured.join(", ")})`);
    this.subject = subject;
  }
}

/** Quotes a value for an error message, shortened so a hostile input cannot flood logs. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > 80 ? `${value.slice(0, 80)}…(${value.length} chars)` : value;
    return JSON.stringify(shown);
  }
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  return `(${typeof value})`;
}
