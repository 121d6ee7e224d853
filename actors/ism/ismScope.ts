import { currentCognition, runWithCognition, type CognitionContext } from "../../runtime/cognition/index.ts";
import { currentTurn, runInTurn, type TurnScope } from "../vocabulary/index.ts";

/**
 * The surroundings the ISM's steps and handlers must run in: the turn's cognition context
 * (models, budget, abort signal) and the soul's turn scope (hooks, pending perceptions).
 *
 * Both live in AsyncLocalStorage, and XState does not promise to run an invoked actor's
 * promise in the async context that started the machine: a later loop starts from the
 * previous promise's settlement, through the actor system's mailbox, possibly while the
 * parent soul is processing something else. So the ISM captures both once, when it is
 * started, and binds them again around every step and handler, marked as the ISM's work
 * (`work: "ism"`) for budgets.
 */
export interface IsmScope {
  cognition?: CognitionContext;
  turn?: TurnScope;
}

export function captureScope(): IsmScope {
  const scope: IsmScope = { cognition: currentCognition() };
  const turn = currentTurn();
  if (turn) scope.turn = turn;
  return scope;
}

export function inScope<T>(scope: IsmScope, fn: () => T): T {
  const { cognition, turn } = scope;
  const withTurn = turn ? () => runInTurn(turn, fn) : fn;
  // The ISM loops on its own (selecting, acting, again): work a budget stops, unless it already
  // runs as other autonomous work (a scheduled turn), which keeps its own name.
  const base = cognition ?? currentCognition();
  return runWithCognition({ ...base, work: base.work ?? "ism" }, withTurn);
}
