import { AsyncLocalStorage } from "node:async_hooks";
import type { ActorRefFrom, AnyActorLogic, InputFrom } from "xstate";
import type { Perception } from "./Perception.ts";

/**
 * What the soul runtime offers code running inside a turn: the seam between the soul
 * machine and everything a process calls (hooks, the ISM). Bound with AsyncLocalStorage,
 * so a blueprint's process needs no extra parameters, as in Open Souls.
 */
export interface TurnScope {
  soulId: string;
  soulName: string;
  /** Perceptions queued behind the running one, live while the process runs. */
  pendingPerceptions(): readonly Perception[];
  /** Starts a child actor in the soul's actor system, so the inspector shows it under the soul. */
  spawnChild<TLogic extends AnyActorLogic>(logic: TLogic, input: InputFrom<TLogic>, id?: string): ActorRefFrom<TLogic>;
  /** Fires when the turn is cancelled (a new perception cancels subprocesses; STOP cancels all). */
  signal: AbortSignal;
  /** A log line that becomes a soul event (visible to debuggers), not speech. */
  log(message: string, data?: Record<string, unknown>): void;
}

const scope = new AsyncLocalStorage<TurnScope>();

export function runInTurn<T>(turn: TurnScope, fn: () => T): T {
  return scope.run(turn, fn);
}

/** The current turn, or undefined outside one (a step called from a plain script). */
export function currentTurn(): TurnScope | undefined {
  return scope.getStore();
}

/** The current turn, or a clear error naming the hook that needs one. */
export function requireTurn(hook: string): TurnScope {
  const turn = scope.getStore();
  if (!turn) throw new Error(`${hook}() can only be called inside a mental process or subprocess of a running soul`);
  return turn;
}
