/**
 * The soul's committed schedules and their timers. The entries are written by the turn
 * commits that make them; this keeps the soul's view of them, arms them, and turns one that
 * falls due into a perception.
 *
 * Why its own file: a schedule lives across restarts and has its own small life (armed,
 * fired, spent, dropped), apart from the turns that make it.
 */
import type { ActorStore, ScheduledEntry } from "../../runtime/store/index.ts";
import type { PerceptionInput } from "../vocabulary/index.ts";
import { scheduledPerception } from "./perceptionInput.ts";
import { Scheduler, type Clock } from "./scheduler.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import type { PerceiveResult } from "./SoulIntake.ts";
import type { SoulWrites } from "./SoulWrites.ts";

export interface SoulSchedulesOptions {
  soulId: string;
  blueprintName: string;
  clock: Clock;
  store: Pick<ActorStore, "schedules" | "inboxEntry" | "deleteSchedule">;
  /** The soul's writes: dropping a schedule goes in line with them. */
  writes: SoulWrites;
  /** How a schedule that falls due reaches the soul. */
  perceive(input: PerceptionInput): Promise<PerceiveResult>;
  emit(event: SoulEvent): void;
  /** A schedule could not fire or be dropped. */
  failed(err: unknown, id: string): void;
}

export class SoulSchedules {
  readonly #o: SoulSchedulesOptions;
  readonly #schedules = new Map<string, ScheduledEntry>();
  readonly #scheduler: Scheduler;

  constructor(options: SoulSchedulesOptions) {
    this.#o = options;
    this.#scheduler = new Scheduler(options.clock, (entry) => this.#fire(entry));
  }

  /** Re-arms the schedules in the store (on activation). */
  restore(): void {
    for (const entry of this.#o.store.schedules()) {
      this.#schedules.set(entry.id, entry);
      this.#scheduler.arm(entry);
    }
  }

  has(id: string): boolean {
    return this.#schedules.has(id);
  }

  committed(): Iterable<ScheduledEntry> {
    return this.#schedules.values();
  }

  /** A turn committed these: cancels the deleted ones, arms the put ones. */
  applied(put: readonly ScheduledEntry[], deleted: readonly string[]): void {
    for (const id of deleted) {
      this.#schedules.delete(id);
      this.#scheduler.cancel(id);
    }
    for (const entry of put) {
      this.#schedules.set(entry.id, entry);
      this.#scheduler.arm(entry);
      this.#o.emit({ type: "scheduled", soulId: this.#o.soulId, id: entry.id, process: entry.process, at: entry.at });
    }
  }

  /** Forgets a schedule and deletes it from the store, in line with the soul's other writes. */
  delete(id: string): Promise<void> {
    this.#schedules.delete(id);
    return this.#o.writes.run(() => this.#o.store.deleteSchedule(id));
  }

  /** Disarms every timer (the soul stops or expires); the entries stay in the store. */
  clear(): void {
    this.#scheduler.clear();
  }

  #fire(entry: ScheduledEntry): void {
    const input = scheduledPerception(entry, this.#o.blueprintName);
    this.#o
      .perceive(input)
      .then((result) => {
        if (result.reason !== "duplicate") return;
        // Fired before a crash: if that perception was already processed, the schedule is spent.
        const inbox = this.#o.store.inboxEntry(entry.id);
        if (inbox && inbox.status !== "pending") this.#drop(entry.id);
      })
      .catch((err: unknown) => {
        this.#o.failed(err, entry.id);
        this.#drop(entry.id);
      });
  }

  #drop(id: string): void {
    void this.delete(id).catch((err: unknown) => this.#o.failed(err, id));
  }
}
