/**
 * The soul's ephemeral events (`emitEphemeral`: typing, progress) for the HTTP bridge's clients:
 * a core subscription to the soul's events subject that keeps only `soul.ephemeral` events the
 * soul itself sent, and hands each to whoever listens right now. Nothing is logged: an
 * ephemeral event is not in the speech log, has no SSE `id:` and is not replayed on reconnect.
 */
import { decodeEnvelope, type Bus, type ClusterSubjects, type Subscription } from "../../runtime/bus/index.ts";

export interface EphemeralEvent {
  /** The soul's own type (`typing`). */
  type: string;
  data?: unknown;
}

type Listener = (event: EphemeralEvent) => void;

/** The event type ephemeral events travel as (runtime/node ephemeralEvents.ts, docs/PROTOCOL.md 13.1). */
const EPHEMERAL_EVENT_TYPE = "soul.ephemeral";

export class EphemeralFeed {
  readonly #listeners = new Set<Listener>();
  readonly #sub: Subscription;

  constructor(bus: Bus, subjects: ClusterSubjects, soulId: string) {
    this.#sub = bus.subscribe(subjects.events(soulId), (msg) => {
      if (this.#listeners.size === 0) return;
      const decoded = decodeEnvelope(msg.data);
      if (!decoded.ok || decoded.envelope.kind !== "event" || decoded.envelope.from !== soulId) return;
      const body = decoded.envelope.body as { type: string; data?: unknown };
      if (body.type !== EPHEMERAL_EVENT_TYPE) return;
      const inner = body.data as { type?: unknown; data?: unknown } | undefined;
      if (typeof inner?.type !== "string") return;
      const event: EphemeralEvent = inner.data === undefined ? { type: inner.type } : { type: inner.type, data: inner.data };
      for (const listener of [...this.#listeners]) {
        try {
          listener(event);
        } catch {
          // one client whose frame could not be written (gone, or data JSON cannot hold) must not cost the others theirs
        }
      }
    });
  }

  listen(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  close(): void {
    this.#listeners.clear();
    this.#sub.unsubscribe();
  }
}
