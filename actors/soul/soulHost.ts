import { createStore } from "@xstate/store";
import type { ActorOptions } from "xstate";
import type { CognitionContext } from "../../runtime/cognition/index.ts";
import type { ActorStore } from "../../runtime/store/index.ts";
import { createSoul, type ActorStoreProvider, type Soul } from "./createSoul.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { Outlet } from "../vocabulary/index.ts";
import type { PerceptionInput } from "../vocabulary/index.ts";
import { systemClock, type Clock } from "./scheduler.ts";
import type { SoulMachine } from "./soulMachine.ts";
import type { SoulServicesOf } from "./SoulServices.ts";
import type { PerceiveResult } from "./SoulIntake.ts";

export interface SoulHostOptions {
  store: ActorStoreProvider | ((id: string) => ActorStore);
  /** The blueprint of each soul; one blueprint for all, or chosen by id. */
  blueprint: SoulBlueprint | ((id: string) => SoulBlueprint);
  outlet?: Outlet;
  cognition?: CognitionContext;
  clock?: Clock;
  inspect?: ActorOptions<SoulMachine>["inspect"];
  /** Told of every activation, to attach listeners to the fresh soul. */
  onActivate?: (soul: Soul) => void;
  /** Perceptions each soul may keep waiting (createSoul's `maxQueued`); one for all, or chosen by id. */
  maxQueued?: number | ((id: string) => number | undefined);
  /** What each soul's hooks reach beyond the soul (SoulServices.ts). */
  services?: SoulServicesOf;
  /**
   * Awaited before a soul is activated (once for concurrent asks): a node under failover takes
   * the soul's lease and brings its store up to its replicated history here. A rejection fails
   * the activation; the next ask tries again.
   */
  prepare?: (id: string) => Promise<void>;
}

export interface SoulRegistryEntry {
  id: string;
  status: "active" | "passivated";
  /** Epoch ms of the latest activation or passivation. */
  since: number;
  activations: number;
}

/**
 * The souls a host has activated, by id. A Map updated in place, not a record copied per
 * event: a host that has activated 100,000 souls copied them all at every activation and
 * passivation (about 11 ms each at 10,000). Each entry stays immutable (a changed soul gets a
 * new one), and `version` rises with every event, as the map itself stays the same object.
 */
function createSoulRegistry() {
  return createStore({
    context: { souls: new Map<string, SoulRegistryEntry>() as ReadonlyMap<string, SoulRegistryEntry>, version: 0 },
    on: {
      activated: (ctx, e: { id: string; at: number }) => {
        const souls = ctx.souls as Map<string, SoulRegistryEntry>;
        souls.set(e.id, { id: e.id, status: "active", since: e.at, activations: (souls.get(e.id)?.activations ?? 0) + 1 });
        return { souls, version: ctx.version + 1 };
      },
      passivated: (ctx, e: { id: string; at: number }) => {
        const souls = ctx.souls as Map<string, SoulRegistryEntry>;
        const entry = souls.get(e.id);
        if (!entry) return ctx;
        souls.set(e.id, { ...entry, status: "passivated", since: e.at });
        return { souls, version: ctx.version + 1 };
      },
    },
  });
}

export type SoulRegistry = ReturnType<typeof createSoulRegistry>;

export interface SoulHost {
  /** The live soul, activated from the store if it is not in memory. */
  get(id: string): Promise<Soul>;
  /** Activates the soul if needed and hands it the perception. */
  perceive(id: string, input: PerceptionInput): Promise<PerceiveResult>;
  /** Stops the soul once it is idle and drops it from memory; its state stays in the store. */
  passivate(id: string): Promise<void>;
  /**
   * Stops the soul after its running turn (perceptions waiting stay in its inbox), runs
   * `between` while no turn can start, then activates it again from the store, which replays
   * what waited: how a soul's state is changed under it (a revert) without a perception lost
   * or answered twice.
   */
  reload<T>(id: string, between: () => Promise<T>): Promise<T>;
  /** Passivates every idle soul with no activity for `olderThanMs`; returns their ids. */
  passivateIdle(olderThanMs: number): Promise<string[]>;
  /** Ids of the souls in memory now. */
  live(): string[];
  /** Which souls this host knows and whether each is live: reactive, inspectable. */
  readonly registry: SoulRegistry;
  /** Passivates every soul. */
  close(): Promise<void>;
}

/**
 * Keeps souls in memory while they are in use and lets idle ones go. A passivated soul is
 * only its LMDB state; the next perception brings it back exactly as it was. A passivated
 * soul with a scheduled event gets a wake-up timer, so the event still fires on time.
 */
/** What the host needs to make any of its souls: per-soul options resolved from the host's. */
function soulMaker(options: SoulHostOptions, clock: Clock): { storeOf: (id: string) => ActorStore; make: (id: string) => Soul } {
  const storeOf = (id: string): ActorStore =>
    typeof options.store === "function" ? options.store(id) : options.store.actor(id);
  const blueprintOf = (id: string): SoulBlueprint =>
    typeof options.blueprint === "function" ? options.blueprint(id) : options.blueprint;
  const maxQueuedOf = (id: string): { maxQueued?: number } => {
    const max = typeof options.maxQueued === "function" ? options.maxQueued(id) : options.maxQueued;
    return max !== undefined ? { maxQueued: max } : {};
  };
  const make = (id: string): Soul =>
    createSoul({
      blueprint: blueprintOf(id),
      id,
      store: storeOf(id),
      clock,
      ...(options.outlet ? { outlet: options.outlet } : {}),
      ...(options.cognition ? { cognition: options.cognition } : {}),
      ...(options.inspect ? { inspect: options.inspect } : {}),
      ...maxQueuedOf(id),
      ...(options.services ? { services: options.services(id) } : {}),
    });
  return { storeOf, make };
}

/** Resolves once the soul is not being passivated (or reloaded) any more. */
async function settled(passivating: ReadonlyMap<string, Promise<void>>, id: string): Promise<void> {
  for (let pending = passivating.get(id); pending; pending = passivating.get(id)) await pending;
}

/** `prepare`, run once for concurrent asks about the same soul. */
function onePerSoul(prepare: ((id: string) => Promise<void>) | undefined): ((id: string) => Promise<void>) | undefined {
  if (!prepare) return undefined;
  const preparing = new Map<string, Promise<void>>();
  return (id) => {
    let pending = preparing.get(id);
    if (!pending) {
      pending = prepare(id).finally(() => preparing.delete(id));
      preparing.set(id, pending);
    }
    return pending;
  };
}

export function createSoulHost(options: SoulHostOptions): SoulHost {
  const clock = options.clock ?? systemClock;
  const { storeOf, make } = soulMaker(options, clock);
  const registry = createSoulRegistry();
  const live = new Map<string, Soul>();
  const passivating = new Map<string, Promise<void>>();
  const wakeups = new Map<string, unknown>();

  const activate = (id: string): Soul => {
    const wake = wakeups.get(id);
    if (wake !== undefined) {
      clock.clearTimeout(wake);
      wakeups.delete(id);
    }
    const soul = make(id);
    live.set(id, soul);
    registry.trigger.activated({ id, at: clock.now() });
    options.onActivate?.(soul);
    return soul;
  };

  const prepared = onePerSoul(options.prepare);
  const get = async (id: string): Promise<Soul> => {
    await settled(passivating, id);
    const soul = live.get(id);
    if (soul || !prepared) return soul ?? activate(id);
    await prepared(id);
    return live.get(id) ?? activate(id);
  };

  const armWakeup = (id: string) => {
    const schedules = storeOf(id).schedules();
    if (schedules.length === 0) return;
    const at = Math.min(...schedules.map((s) => s.at));
    wakeups.set(
      id,
      clock.setTimeout(() => {
        wakeups.delete(id);
        if (!live.has(id)) get(id).catch(() => undefined); // a failed activation: the next perception tries again
      }, Math.max(0, at - clock.now())),
    );
  };

  const passivate = (id: string): Promise<void> => {
    const soul = live.get(id);
    if (!soul) return passivating.get(id) ?? Promise.resolve();
    const done = (async () => {
      try {
        await soul.passivate();
      } finally {
        live.delete(id);
        passivating.delete(id);
        registry.trigger.passivated({ id, at: clock.now() });
        armWakeup(id);
      }
    })();
    passivating.set(id, done);
    return done;
  };

  const reload = async <T>(id: string, between: () => Promise<T>): Promise<T> => {
    await settled(passivating, id);
    const soul = live.get(id);
    // Held as a passivation: whoever asks for the soul meanwhile waits for it to come back.
    const done = (soul ? soul.stop() : Promise.resolve()).then(between).finally(() => {
      if (soul) (live.delete(id), registry.trigger.passivated({ id, at: clock.now() }));
      passivating.delete(id);
    });
    passivating.set(id, done.then(() => undefined, () => undefined));
    const result = await done;
    if (soul) activate(id);
    return result;
  };

  return {
    get,
    reload,
    async perceive(id, input) {
      return (await get(id)).perceive(input);
    },
    passivate,
    async passivateIdle(olderThanMs) {
      const cutoff = clock.now() - olderThanMs;
      const idle = [...live.values()].filter((soul) => {
        const state = soul.state();
        // Speech waiting for a retry keeps its soul live: passivated, it would wait for the next perception.
        return !state.running && state.pending === 0 && state.undelivered === 0 && soul.lastActivity() <= cutoff;
      });
      await Promise.all(idle.map((soul) => passivate(soul.id)));
      return idle.map((soul) => soul.id);
    },
    live: () => [...live.keys()],
    registry,
    async close() {
      await Promise.all([...live.keys()].map(passivate));
      for (const handle of wakeups.values()) clock.clearTimeout(handle);
      wakeups.clear();
    },
  };
}
