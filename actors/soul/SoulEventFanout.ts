/**
 * A soul's events, handed to every listener (the node's router, an inspector, tests). A
 * listener that throws is not the soul's problem: it must not break the soul it listens to.
 */
import type { SoulEvent, SoulEventListener } from "./SoulEvent.ts";

export class SoulEventFanout {
  readonly #listeners = new Set<SoulEventListener>();

  constructor(private readonly soulId: string) {}

  /** Adds a listener; returns its removal. */
  listen(listener: SoulEventListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Someone listens: events that cost something to build are built only then. */
  get heard(): boolean {
    return this.#listeners.size > 0;
  }

  emit(event: SoulEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // the listener's failure, not the soul's
      }
    }
  }

  /** A failure outside a process's own code: a write, a delivery, a schedule. */
  failed(phase: "commit" | "deliver" | "schedule", err: unknown, perceptionId?: string): void {
    const message = (err as Error)?.message ?? String(err);
    this.emit({ type: "error", soulId: this.soulId, phase, message, ...(perceptionId ? { perceptionId } : {}) });
  }
}
