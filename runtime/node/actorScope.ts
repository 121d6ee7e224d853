/**
 * Which actor the code running now works for: each supervised actor's work (a soul's turns,
 * its timers, the promises they start) runs inside its scope, an AsyncLocalStorage that every
 * callback and continuation created there inherits. A failure nothing caught (an uncaught
 * exception, a rejection nobody handled) is then attributed to the actor whose work it was,
 * and only that actor is restarted (runtime/cli processGuard.ts); what no actor owns ends the
 * process.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface SupervisedActor {
  /** How it is named in events and the log: `soul claudius`. */
  readonly name: string;
  /** The soul it belongs to, whose events subject hears of its failures. */
  readonly soulId: string;
  /** Hands the actor's supervisor a failure: the actor is stopped and restarted with backoff. */
  failed(err: unknown, how: string): void;
}

const scope = new AsyncLocalStorage<SupervisedActor>();

/** Runs `work` as the actor's: whatever it starts is attributed to the actor. */
export function inActor<T>(actor: SupervisedActor, work: () => T): T {
  return scope.run(actor, work);
}

/** The actor whose work is running now, if any. */
export function currentActor(): SupervisedActor | undefined {
  return scope.getStore();
}
