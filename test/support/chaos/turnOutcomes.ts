/**
 * What became of each perception, as a bridge or a debugger sees it on the bus: the final
 * speech on the says subjects, the chunks before it, and the soul's and node's events
 * (`soul.error`, `soul.intercepted`, `node.blocked`, `gate.decision`), all kept by the
 * perception they answer (`causation`). Every copy is kept, not just the first, so a
 * scenario can count duplicates instead of hiding them.
 */
import { decodeEnvelope, type Bus, type Envelope, type Subscription } from "../../../runtime/bus/index.ts";

export interface TurnOutcomes {
  /** Final speech by the perception it answers. */
  readonly finals: Map<string, Envelope<"speech">[]>;
  /** Every speech envelope, chunks included, in arrival order. */
  readonly speech: Envelope<"speech">[];
  /** Event envelopes by type (`soul.error`, `soul.intercepted`, ...), in arrival order. */
  readonly events: Map<string, Envelope<"event">[]>;
  /** Events of `type` about one perception. */
  eventsOf(type: string, perceptionId: string): Envelope<"event">[];
  /** Resolves when `done()` holds, checked on every envelope that arrives; rejects after `ms`. */
  until(done: () => boolean, ms: number, what: string): Promise<void>;
  stop(): void;
}

export function watchTurnOutcomes(bus: Bus, cluster: string): TurnOutcomes {
  // Every soul of the cluster: subject names refuse a wildcard as a soul id, so spelled out here.
  const every = (verb: string) => `ensoul.${cluster}.soul.*.${verb}`;
  const finals = new Map<string, Envelope<"speech">[]>();
  const speech: Envelope<"speech">[] = [];
  const events = new Map<string, Envelope<"event">[]>();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const subs: Subscription[] = [
    bus.subscribe(every("says"), (msg) => {
      const d = decodeEnvelope(msg.data);
      if (!d.ok || d.envelope.kind !== "speech") return;
      const env = d.envelope as Envelope<"speech">;
      speech.push(env);
      if (env.body.final) {
        const key = env.causation ?? "(none)";
        finals.set(key, [...(finals.get(key) ?? []), env]);
      }
      wake();
    }),
    bus.subscribe(every("events"), (msg) => {
      const d = decodeEnvelope(msg.data);
      if (!d.ok || d.envelope.kind !== "event") return;
      const env = d.envelope as Envelope<"event">;
      events.set(env.body.type, [...(events.get(env.body.type) ?? []), env]);
      wake();
    }),
  ];
  return {
    finals,
    speech,
    events,
    eventsOf: (type, perceptionId) => (events.get(type) ?? []).filter((e) => e.causation === perceptionId),
    until(done, ms, what) {
      if (done()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!done()) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
      });
    },
    stop: () => subs.forEach((s) => s.unsubscribe()),
  };
}
