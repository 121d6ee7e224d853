/**
 * A node's ephemeral events (`emitEphemeral`): an `event` envelope of type `soul.ephemeral`,
 * `data: { type, data }`, from the soul, on its events subject (core NATS, so nothing stores
 * it: not the stream, not LMDB). Made and checked at once, so a process hears of an event too
 * large or not plain msgpack where it called; a failed publish is only reported, as for every
 * event (soulEvents.ts): an ephemeral event is worth nothing later.
 */
import { encodeEnvelope, makeEnvelope, PayloadTooLargeError, type Bus, type ClusterSubjects } from "../bus/index.ts";

/** The largest ephemeral event, encoded: room for a typing indicator or a chunk of audio, not for documents. */
export const EPHEMERAL_MAX_BYTES = 64 * 1024;

/** The event type every ephemeral event travels as; its own type is in its data. */
export const EPHEMERAL_EVENT_TYPE = "soul.ephemeral";

export type EphemeralPublisher = (soulId: string, type: string, data: unknown) => void;

export function createEphemeralPublisher(bus: Bus, subjects: ClusterSubjects, onError: (err: unknown, what: string) => void): EphemeralPublisher {
  return (soulId, type, data) => {
    const env = makeEnvelope("event", soulId, soulId, { type: EPHEMERAL_EVENT_TYPE, data: data === undefined ? { type } : { type, data } });
    let bytes: Uint8Array;
    try {
      bytes = encodeEnvelope(env, { maxBytes: EPHEMERAL_MAX_BYTES });
    } catch (err) {
      if (err instanceof PayloadTooLargeError) {
        throw new RangeError(`emitEphemeral('${type}'): the event is ${err.size} bytes encoded, over the limit of ${EPHEMERAL_MAX_BYTES}`, { cause: err });
      }
      throw new TypeError(`emitEphemeral('${type}'): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    bus.publish(subjects.events(soulId), bytes).catch((err: unknown) => onError(err, `ephemeral event ${type} of ${soulId}`));
  };
}
