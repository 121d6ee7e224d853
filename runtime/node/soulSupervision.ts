/**
 * The node's souls under its supervisor (Supervisor.ts): each soul is a supervised actor
 * (`soul <id>`). Its work runs in its scope (actorScope.ts): its activation (the restore and
 * the replay of its inbox), and every perception, whisper and scheduled wake-up handed to it,
 * so whatever its turns start is attributed to it. It fails when its machine errors or when
 * its work throws where nothing catches it; it is then restarted as a revert reloads it: the
 * soul stops (after its running turn, if it still runs one), the backoff passes with no turn
 * able to start, and it is activated again from LMDB, which replays what waited in its inbox.
 */
import type { Soul, SoulHost } from "../../actors/soul/index.ts";
import { inActor, type SupervisedActor } from "./actorScope.ts";
import type { EventPublisher } from "./soulEvents.ts";
import { Supervisor, type Backoff } from "./Supervisor.ts";

export interface SoulSupervision {
  /** The soul's actor handle (one per soul id, for the node's life). */
  actorOf(soulId: string): SupervisedActor;
  /** Runs `work` in the soul's scope. */
  within<T>(soulId: string, work: () => T): T;
  /** The soul as the node hands it out: what is asked of it runs in its scope. */
  scoped(soul: Soul): Soul;
  /** Watches a soul just activated: its machine failing is a failure of the actor. */
  watch(soul: Soul): void;
  /** No more restarts: the node is stopping. */
  stop(): void;
}

export function superviseSouls(host: () => SoulHost, o: { events: EventPublisher; report(err: unknown, what: string): void; backoff?: Partial<Backoff> }): SoulSupervision {
  const supervisor = new Supervisor({
    event: (actor, type, data) => o.events.node(actor.soulId, type, data),
    report: o.report,
    ...(o.backoff ? { backoff: o.backoff } : {}),
  });
  const actors = new Map<string, SupervisedActor>();
  const facades = new WeakMap<Soul, Soul>();
  const actorOf = (soulId: string): SupervisedActor => {
    let actor = actors.get(soulId);
    if (!actor) {
      actor = supervisor.actor(`soul ${soulId}`, soulId, (delay) => host().reload(soulId, () => delay));
      actors.set(soulId, actor);
    }
    return actor;
  };
  const within = <T>(soulId: string, work: () => T): T => inActor(actorOf(soulId), work);
  return {
    actorOf,
    within,
    scoped(soul) {
      let facade = facades.get(soul);
      if (!facade) {
        // Everything else of the soul is read through to it, unchanged.
        facade = Object.assign(Object.create(soul) as Soul, {
          perceive: (input: Parameters<Soul["perceive"]>[0]) => within(soul.id, () => soul.perceive(input)),
          perceiveHeld: (input: Parameters<Soul["perceiveHeld"]>[0]) => within(soul.id, () => soul.perceiveHeld(input)),
          whisper: (content: string, source?: string) => within(soul.id, () => soul.whisper(content, source)),
        });
        facades.set(soul, facade);
      }
      return facade;
    },
    watch(soul) {
      const actor = actorOf(soul.id);
      soul.actor.subscribe({ error: (err) => inActor(actor, () => actor.failed(err, "its machine failed")) });
    },
    stop: () => supervisor.stop(),
  };
}
