import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import type { Soul } from "../../../actors/soul/createSoul.ts";
import type { SoulEvent } from "../../../actors/soul/SoulEvent.ts";

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Everything a soul says and reports, collected for assertions. */
export function record(soul: Soul): { speech: Proposal[]; events: SoulEvent[]; said(): string[]; errors(): string[] } {
  const speech: Proposal[] = [];
  const events: SoulEvent[] = [];
  soul.onSpeech((p) => speech.push(p));
  soul.onEvent((e) => events.push(e));
  return {
    speech,
    events,
    said: () => speech.map((p) => p.content),
    errors: () => events.flatMap((e) => (e.type === "error" ? [e.message] : [])),
  };
}

export const said = (content: string, name = "Ada") => ({ action: "said", content, name });

/** Resolves after `condition` holds, polling; fails the test after `ms`. */
export async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > ms) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 2));
  }
}
