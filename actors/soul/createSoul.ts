import type { ActorOptions } from "xstate";
import type { SoulServices } from "./SoulServices.ts";
import type { CognitionContext } from "../../runtime/cognition/index.ts";
import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { ActorStore } from "../../runtime/store/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import { createInProcessOutlet, type Outlet } from "../vocabulary/index.ts";
import type { PerceptionInput } from "../vocabulary/index.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { systemClock, type Clock } from "./scheduler.ts";
import type { SoulEventListener } from "./SoulEvent.ts";
import type { SoulMachine } from "./soulMachine.ts";
import type { HeldPerceiveResult, PerceiveResult } from "./SoulIntake.ts";
import { SoulRuntime } from "./SoulRuntime.ts";
import type { SoulStatus } from "./SoulStatus.ts";

/** A store of many actors, as `runtime/store` opens it: the soul takes its own keyspace. */
export interface ActorStoreProvider {
  actor(id: string): ActorStore;
}

export interface CreateSoulOptions {
  blueprint: SoulBlueprint;
  id: string;
  store: ActorStore | ActorStoreProvider;
  outlet?: Outlet;
  cognition?: CognitionContext;
  /** XState's inspect option: the Stately inspector or ensoul's debugger. */
  inspect?: ActorOptions<SoulMachine>["inspect"];
  clock?: Clock;
  /** Attached before the soul restores, so events of the restore itself are seen too. */
  onEvent?: SoulEventListener;
  /**
   * Perceptions that may wait behind the running one (default DEFAULT_MAX_QUEUED); past it
   * `perceive` rejects with SoulQueueFull and writes nothing.
   */
  maxQueued?: number;
  /** What the soul's hooks reach beyond the soul (SoulServices.ts). */
  services?: SoulServices;
}

export interface SoulStateView {
  process: string;
  previousProcess: string | undefined;
  /** Committed turns. */
  turn: number;
  /** Perceptions queued behind the running one. */
  pending: number;
  running: boolean;
  /** Committed proposals not yet delivered: one whose delivery failed waits for its retry, and those after it. */
  undelivered: number;
  status: SoulStatus;
  invocationCounts: Readonly<Record<string, number>>;
}

export interface Soul {
  readonly id: string;
  readonly blueprint: SoulBlueprint;
  /**
   * Records the perception in the inbox, then queues it; a duplicate id is dropped. With
   * `maxQueued` perceptions waiting it rejects with SoulQueueFull, and nothing is written.
   */
  perceive(input: PerceptionInput): Promise<PerceiveResult>;
  /**
   * For a source that redelivers a perception until it is acknowledged (a JetStream
   * consumer): the soul skips the inbox write and records the perception in its turn's
   * commit; acknowledge it when `settled` resolves (when there is no `settled`, at once).
   */
  perceiveHeld(input: PerceptionInput): Promise<HeldPerceiveResult>;
  /**
   * Undefined when the soul can take a perception now; else a promise that resolves once a
   * turn has made room, or once the soul is no longer active. A source that can keep its
   * perceptions (a stream) waits on it instead of sending what would be refused.
   */
  room(): Promise<void> | undefined;
  /**
   * A daimon's intuition: sanitised, kept in soul memory `daimonicWhisper` (resolves when
   * durable; rejects, and keeps nothing, when its commit fails), recalled as the soul's own memory by the next successful turn that answers an
   * external perception, and consumed by that turn's commit. One that is empty once
   * sanitised is not kept (a `whisperIgnored` event says so).
   */
  whisper(content: string, source?: string): Promise<void>;
  onSpeech(listener: (proposal: Proposal) => void): () => void;
  onEvent(listener: SoulEventListener): () => void;
  /** Resolves when no perception is queued or running and every write and delivery has settled. */
  idle(): Promise<void>;
  state(): SoulStateView;
  /** The committed working memory and soul memory (what the last turn left). */
  memory(): { workingMemory: WorkingMemory; soulMemory: Readonly<Record<string, unknown>> };
  /** Epoch ms of the last perception or turn, for passivation. */
  lastActivity(): number;
  /** Finishes the running turn, cancels subprocesses and timers; queued perceptions wait in the inbox. */
  stop(): Promise<void>;
  /** Waits until idle, then stops: the soul can be rehydrated from the store with nothing lost. */
  passivate(): Promise<void>;
  /** The soul's machine actor, for inspection. */
  readonly actor: SoulRuntime["actor"];
}

function isProvider(store: ActorStore | ActorStoreProvider): store is ActorStoreProvider {
  return typeof (store as ActorStoreProvider).actor === "function" && !("actorId" in store);
}

/**
 * Starts a soul from its blueprint, restored from the store exactly where its last committed
 * turn left it: the same process, memories and counts; pending perceptions replayed in order;
 * schedules re-armed; un-acknowledged speech delivered again.
 */
export function createSoul(options: CreateSoulOptions): Soul {
  const store = isProvider(options.store) ? options.store.actor(options.id) : options.store;
  const runtime = new SoulRuntime({
    blueprint: options.blueprint,
    id: options.id,
    store,
    outlet: options.outlet ?? createInProcessOutlet(),
    clock: options.clock ?? systemClock,
    ...(options.cognition ? { cognition: options.cognition } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.maxQueued !== undefined ? { maxQueued: options.maxQueued } : {}),
    ...(options.services ? { services: options.services } : {}),
  });
  return {
    id: options.id,
    blueprint: options.blueprint,
    actor: runtime.actor,
    perceive: (input) => runtime.perceive(input),
    perceiveHeld: (input) => runtime.perceiveHeld(input),
    room: () => runtime.room(),
    async whisper(content, source = "daimon") {
      if (runtime.status !== "active") throw new Error(`soul '${options.id}' is ${runtime.status}; the whisper was not kept`);
      await runtime.keepWhisper(content, source);
    },
    onSpeech: (listener) => runtime.onSpeech(listener),
    onEvent: (listener) => runtime.onEvent(listener),
    idle: () => runtime.idle(),
    state() {
      const committed = runtime.committed();
      const snapshot = runtime.actor.getSnapshot();
      return {
        process: committed.currentProcess,
        previousProcess: committed.previousProcess,
        turn: committed.turn,
        pending: snapshot.context.queue.length,
        running: snapshot.context.perception !== null,
        undelivered: runtime.undelivered,
        status: runtime.status,
        invocationCounts: committed.invocationCounts,
      };
    },
    memory() {
      const committed = runtime.committed();
      return { workingMemory: committed.memory, soulMemory: committed.soulMemory };
    },
    lastActivity: () => runtime.lastActivity,
    stop: () => runtime.stop(),
    async passivate() {
      await runtime.idle();
      await runtime.stop();
    },
  };
}
