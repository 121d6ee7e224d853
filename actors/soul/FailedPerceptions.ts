/**
 * What becomes of a perception whose turn failed: it is set aside in the inbox with its error
 * (written first when the inbox does not hold it yet: held by its source, or its own write not
 * landed), and only then is the person told (`soul.error`, phase `process`) and its source let
 * acknowledge it. A full store is the exception: the perception stays pending, for the soul's
 * next activation, and the person is told.
 *
 * Why the record comes before the word: an error said and not recorded is a promise broken the
 * other way, since the perception, still pending or delivered again, may be answered after all.
 * So a record that cannot be written is tried again with backoff (the outbox's: 250 ms
 * doubling to 30 s) while the soul runs, and the soul takes no other perception meanwhile (its
 * order holds). Stopping, it gives up: a held perception goes back to its source, a pending
 * one waits in the inbox, and either runs again at the next activation.
 */
import { StoreFullError, type ActorStore } from "../../runtime/store/index.ts";
import type { Perception } from "../vocabulary/index.ts";
import { failureReason, turnFailureOf } from "./FailedTurn.ts";
import type { HeldPerceptions } from "./HeldPerceptions.ts";
import { redeliveryDelay } from "./OutboxDelivery.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import { receivePerception, type SoulIntake } from "./SoulIntake.ts";
import type { SoulSchedules } from "./SoulSchedules.ts";
import type { SoulWrites } from "./SoulWrites.ts";

export interface FailedPerceptionsOptions {
  soulId: string;
  store: Pick<ActorStore, "receive" | "markError" | "inboxEntry">;
  clock: Clock;
  writes: SoulWrites;
  held: HeldPerceptions;
  intake: Pick<SoulIntake, "unconfirmed" | "turnEnded">;
  schedules: Pick<SoulSchedules, "has" | "delete">;
  emit(event: SoulEvent): void;
  /** A try to write the record failed (reported, then tried again). */
  failed(err: unknown, perceptionId: string): void;
  /** The soul is stopping: no more tries. */
  stopping(): boolean;
  /** The failed turn's tool-call records may go (its perception is set aside). */
  setAside(): void;
}

export class FailedPerceptions {
  readonly #o: FailedPerceptionsOptions;

  constructor(options: FailedPerceptionsOptions) {
    this.#o = options;
  }

  async fail(perception: Perception, process: string, error: unknown, turnId?: string): Promise<void> {
    const o = this.#o;
    const { id } = perception;
    // Its inbox write failed after the turn began: not taken, so not failed; its source delivers
    // it again. (Unless the write landed after all, its acknowledgement lost: then it is in the
    // inbox, a redelivery is a duplicate, and its failure is recorded as any other.)
    if (o.intake.turnEnded(id) && o.store.inboxEntry(id) === undefined) return;
    // The reason the inbox keeps and the person is told: the message, and where the soul's own code threw.
    const failure = turnFailureOf(error);
    const outcome = await this.#record(perception, error, failureReason(failure));
    if (outcome === "stopped") return;
    // Its commit is in the store after all (a store that reported a failure it had not had): nothing to set aside or tell.
    if (outcome === "done") return o.held.settle(id);
    o.emit({ type: "error", soulId: o.soulId, phase: "process", ...failure, perceptionId: id, process, ...(turnId !== undefined ? { turnId } : {}) });
    // Set aside with its error, the failed turn (the one after the last commit) is not run again: its tool calls' records go.
    if (turnId !== undefined && o.store.inboxEntry(id)?.status === "error") o.setAside();
    if (o.schedules.has(id)) await o.schedules.delete(id).catch((err: unknown) => o.failed(err, id));
    o.held.settle(id);
  }

  /** Writes the perception's fate, trying again until it lands (or the soul stops). */
  async #record(perception: Perception, error: unknown, message: string): Promise<"recorded" | "done" | "stopped"> {
    const o = this.#o;
    const { id } = perception;
    for (let tries = 1; ; tries++) {
      try {
        const entry = o.store.inboxEntry(id);
        if (entry?.status === "done") return "done";
        // Not in the inbox yet (held, or its own write not landed): the failure is kept there all the same.
        if (entry === undefined || o.held.recordOf(id) || o.intake.unconfirmed(id)) await o.writes.run(() => receivePerception(o, perception));
        // A full store refused the commit, not the perception: it stays pending, and the soul's
        // next activation (once the operator has made room) processes it. Marked failed, nothing would.
        if (!(error instanceof StoreFullError)) await o.writes.run(() => markFailed(o.store, id, message));
        return "recorded";
      } catch (err) {
        o.failed(err, id);
        if (o.stopping()) {
          o.held.release(id, err);
          return "stopped";
        }
        await new Promise<void>((resolve) => o.clock.setTimeout(() => resolve(), redeliveryDelay(tries)));
      }
    }
  }
}

/** Marks the entry failed; one marked already (a try whose acknowledgement was lost) counts as marked. */
async function markFailed(store: FailedPerceptionsOptions["store"], id: string, message: string): Promise<void> {
  if (store.inboxEntry(id)?.status === "error") return;
  await store.markError(id, message);
}
