/**
 * The receiving rule from DESIGN.md, in one place: every envelope is validated on receipt,
 * and an invalid one goes to `dead` with its reason and never reaches an actor. Wrap an
 * actor's handler with `acceptEnvelopes` and it only ever sees valid envelopes.
 */
import type { Bus } from "./Bus.ts";
import { deadLetter } from "./dead.ts";
import { decodeEnvelope, type Envelope, type EnvelopeKind } from "./envelope.ts";

export interface AcceptOptions<K extends EnvelopeKind> {
  /** Kinds this receiver takes; any other kind is dead-lettered as unexpected. */
  kinds?: readonly K[];
  /** Largest envelope accepted (default 1 MiB). */
  maxBytes?: number;
}

/**
 * Turns an envelope handler into a message handler (for `subscribe` or `durable`). A bad
 * message is dead-lettered and then treated as handled, so a durable consumer acks it
 * instead of redelivering it forever; while its dead letter cannot be published, the handler
 * throws instead, so a durable consumer delivers it again.
 */
export function acceptEnvelopes<M extends { readonly subject: string; readonly data: Uint8Array }, K extends EnvelopeKind = EnvelopeKind>(
  bus: Bus,
  handler: (envelope: Envelope<K>, msg: M) => void | Promise<void>,
  opts: AcceptOptions<K> = {},
): (msg: M) => Promise<void> {
  // Treated as handled only with its dead letter written: a durable message acked without one
  // would vanish, so the handler fails instead and the message comes back (PROTOCOL.md 8).
  const refuse = async (msg: M, reason: string) => {
    if (!(await deadLetter(bus, bus.cluster, { subject: msg.subject, reason, data: msg.data }))) {
      throw new Error(`could not dead-letter a message from ${msg.subject} (${reason})`);
    }
  };
  return async (msg) => {
    const decoded = decodeEnvelope(msg.data, { maxBytes: opts.maxBytes });
    if (!decoded.ok) return refuse(msg, decoded.reason);
    const env = decoded.envelope;
    if (opts.kinds && !(opts.kinds as readonly string[]).includes(env.kind)) {
      return refuse(msg, `unexpected kind ${env.kind} (this receiver takes ${opts.kinds.join(", ")})`);
    }
    await handler(env as Envelope<K>, msg);
  };
}
