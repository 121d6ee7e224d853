/**
 * How perceptions come into a soul: each is checked, written to the inbox (or, for a source
 * that keeps it until acknowledged, held unwritten: see HeldPerceptions) and sent to the
 * soul's machine, in the order it was taken; on activation, the pending inbox is sent again.
 *
 * Why its own file: the order is the subtle part (inbox writes go out at once, events follow
 * in call order, held perceptions go into the inbox ahead of a later one), and it is easier
 * to keep right in one small place than spread through the runtime. A perception on its way
 * into the inbox counts as busy, so the soul is not idle while one is.
 */
import type { Actor } from "xstate";
import type { ActorStore } from "../../runtime/store/types.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import { MAX_HELD, type HeldPerceptions } from "./HeldPerceptions.ts";
import type { Perception, PerceptionInput } from "./Perception.ts";
import { normalizePerception } from "./perceptionInput.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulMachine } from "./soulMachine.ts";
import type { SoulStatus } from "./SoulRuntime.ts";
import type { SoulState } from "./SoulState.ts";
import type { SoulWrites } from "./SoulWrites.ts";

export interface PerceiveResult {
  accepted: boolean;
  /** The perception's id (generated when the input had none): its inbox key. */
  id: string;
  /** Why it was not accepted. */
  reason?: "duplicate" | "expired";
}

/** `perceiveHeld`'s answer: `settled` is set when the soul holds the perception unwritten. */
export interface HeldPerceiveResult extends PerceiveResult {
  /** Resolves once the source may acknowledge it; rejects when the source must deliver it again. */
  settled?: Promise<void>;
}

/** What the intake needs from its soul; implemented by SoulRuntime. */
export interface IntakeSoul {
  readonly soulId: string;
  readonly blueprint: SoulBlueprint;
  readonly clock: Clock;
  readonly store: Pick<ActorStore, "receive" | "inboxEntry" | "pendingInbox" | "markError">;
  readonly actor: Pick<Actor<SoulMachine>, "getSnapshot" | "send">;
  readonly status: SoulStatus;
  lastActivity: number;
  committed(): SoulState;
}

export interface SoulIntakeOptions {
  /** Perceptions taken unwritten; the soul's turns record and settle them. */
  held: HeldPerceptions;
  /** The soul's writes: a replayed entry that cannot run is marked in line with them. */
  writes: SoulWrites;
  /** Counts perceptions on their way into the inbox, so the soul is not idle while one is. */
  busy(delta: 1 | -1): void;
}

const noop = () => undefined;

export class SoulIntake {
  readonly #soul: IntakeSoul;
  readonly #o: SoulIntakeOptions;
  #lastSend: Promise<unknown> = Promise.resolve();
  #receiving = 0;

  constructor(soul: IntakeSoul, options: SoulIntakeOptions) {
    this.#soul = soul;
    this.#o = options;
  }

  /** Resolves once every perception taken so far has gone into the inbox (or failed to). */
  received(): Promise<unknown> {
    return this.#lastSend;
  }

  perceive(input: PerceptionInput): Promise<PerceiveResult> {
    const soul = this.#soul;
    if (soul.status === "expired" || soul.committed().metadata["expired"] === true) {
      return Promise.resolve({ accepted: false, id: input.id ?? "", reason: "expired" });
    }
    if (soul.status !== "active" && soul.status !== "stopping") return Promise.reject(new Error(`soul '${soul.soulId}' is stopped`));
    let perception: Perception;
    try {
      perception = normalizePerception(input, soul.blueprint, soul.clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    soul.lastActivity = soul.clock.now();
    this.#o.busy(1);
    this.#receiving++;
    // Held perceptions go into the inbox ahead of this one, so a crash replays them in order.
    if (this.#o.held.size) this.#o.held.demote((p) => soul.store.receive(p.id, p));
    const received = soul.store.receive(perception.id, perception);
    // Inbox writes go out at once; PERCEIVE events follow in call order, so a receive that
    // finishes early waits for the ones before it (only when there are any).
    const ordered = this.#receiving === 1 ? received : Promise.all([received, this.#lastSend]).then(([accepted]) => accepted);
    const sent = ordered.then(
      (accepted) => {
        if (accepted) this.#send(perception);
        this.#received();
        return accepted ? { accepted, id: perception.id } : { accepted, id: perception.id, reason: "duplicate" as const };
      },
      (error: unknown) => {
        this.#received();
        throw error;
      },
    );
    this.#lastSend = sent.then(noop, noop);
    return sent;
  }

  perceiveHeld(input: PerceptionInput): Promise<HeldPerceiveResult> {
    const soul = this.#soul;
    if (this.#receiving > 0 || this.#o.held.size >= MAX_HELD || soul.status !== "active" || soul.committed().metadata["expired"] === true) return this.perceive(input);
    if (soul.actor.getSnapshot().status !== "active") return this.perceive(input);
    let perception: Perception;
    try {
      perception = normalizePerception(input, soul.blueprint, soul.clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    if (soul.store.inboxEntry(perception.id)) return Promise.resolve({ accepted: false, id: perception.id, reason: "duplicate" });
    // Delivered again while held (the source's redelivery): acknowledged when the first is.
    const held = this.#o.held.settlement(perception.id);
    if (held) return Promise.resolve({ accepted: false, id: perception.id, reason: "duplicate", settled: held });
    soul.lastActivity = soul.clock.now();
    const settled = this.#o.held.hold(perception);
    this.#send(perception);
    return Promise.resolve({ accepted: true, id: perception.id, settled });
  }

  /** Sends the pending inbox to the machine in order (on activation). */
  replay(): void {
    const soul = this.#soul;
    for (const entry of soul.store.pendingInbox()) {
      const perception = entry.perception as Perception;
      if (perception.process !== undefined && !soul.blueprint.processes.has(perception.process)) {
        void this.#o.writes.run(() => soul.store.markError(entry.id, `process '${perception.process}' is not in blueprint '${soul.blueprint.name}'`));
        continue;
      }
      this.#send(perception);
    }
  }

  #send(perception: Perception): void {
    // A stopped soul leaves it in the inbox: the next activation replays it.
    if (this.#soul.actor.getSnapshot().status !== "active") return;
    const routed = perception.internal === true && perception.process !== undefined;
    this.#soul.actor.send({ type: routed ? "SCHEDULED" : "PERCEIVE", perception });
  }

  #received(): void {
    this.#receiving--;
    this.#o.busy(-1);
  }
}
