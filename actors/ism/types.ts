import type { WorkingMemory } from "../../runtime/cognition/WorkingMemory.ts";

/**
 * The shapes an ISM shares with blueprints and with the soul machine. They follow Open
 * Souls' `implicitSemanticMachine` so blueprints port unchanged: an action's handler gets
 * `(workingMemory, internalMemory, recurse)` and either recurses, returns a memory, or
 * returns a process transition tuple.
 */

/**
 * Where a process transition goes: a process name, or the process function itself (Open
 * Souls returns the function). Typed as "any function" so the soul's own MentalProcess type
 * fits without this folder depending on it.
 */
export type ProcessRef = string | ((...args: never[]) => unknown);

/** The third element of a mental process's transition tuple. */
export interface TransitionOptions {
  /** Run the next process at once, with the same perception, instead of on the next one. */
  executeNow?: boolean;
  params?: Record<string, unknown>;
}

/** What a mental process returns to move to another process. */
export type ProcessTransition<P extends ProcessRef = ProcessRef> =
  | [WorkingMemory, P]
  | [WorkingMemory, P, TransitionOptions];

/** What a mental process returns: the memory to keep, or a transition. */
export type ProcessReturn<P extends ProcessRef = ProcessRef> = WorkingMemory | ProcessTransition<P>;

/**
 * Brand of the value `recurse()` returns. A symbol, not a string tag, so a handler's own
 * return value can never be mistaken for "continue the loop".
 */
export const ISM_RECURSE: unique symbol = Symbol.for("ensoul.ism.recurse");

/** "Go round the loop again with these memories"; only the ISM that handed out `recurse` reads it. */
export interface RecurseSignal {
  readonly [ISM_RECURSE]: true;
  readonly workingMemory: WorkingMemory;
  /** Absent: the internal memory the handler was given is kept. */
  readonly internalMemory?: WorkingMemory;
}

export type Recurse = (next: { workingMemory: WorkingMemory; internalMemory?: WorkingMemory }) => RecurseSignal;

/**
 * How a handler ends its turn in the loop: `recurse(...)` continues, a WorkingMemory ends the
 * ISM (`done`), a `[memory, process, options]` tuple ends it with a process transition.
 */
export type ActionHandlerResult<P extends ProcessRef = ProcessRef> = RecurseSignal | WorkingMemory | ProcessTransition<P>;

export type ActionHandler<P extends ProcessRef = ProcessRef> = (
  workingMemory: WorkingMemory,
  internalMemory: WorkingMemory,
  recurse: Recurse,
) => ActionHandlerResult<P> | Promise<ActionHandlerResult<P>>;

/** One choice the soul can make. */
export interface IsmAction<P extends ProcessRef = ProcessRef> {
  /** What the model answers to pick it; unique, and never `DONE` (reserved for "goal met"). */
  name: string;
  /** Shown to the model next to the name: this is how it decides. */
  description: string;
  handleActionUse: ActionHandler<P>;
}

/** The model's answer for "the goal is satisfied". */
export const DONE_ACTION = "DONE";

export type IsmOutcome = "done" | "transition" | "interrupted" | "exhausted" | "failed";

/** How one chosen action's handler ended. */
export type ActionResultKind = "continued" | "ended" | "transitioned" | "threw" | "skipped";

export interface ActionResult {
  action: string;
  result: ActionResultKind;
}

/**
 * One entry of the decision log: the ISM's internal memory of what it chose and why. It is
 * fed back to the model every loop so the soul sees its own history and does not repeat
 * itself.
 */
export interface DecisionLogEntry {
  /** The loop the choice was made in, from 0. A retried choice shares its loop. */
  loop: number;
  /** The action names as the model wrote them. */
  actions: string[];
  reasoning: string;
  /**
   * `acted`: the handlers ran; `done`: the model declared the goal met; `rejected`: the
   * choice named unknown actions (the choice is asked again once); `failed`: no usable
   * choice could be had (format ignored twice, provider error, second rejection).
   */
  status: "acted" | "done" | "rejected" | "failed";
  /** Why a choice was rejected or failed, or why a handler threw. */
  error?: string;
  /** Per chosen action, how its handler ended (only for `acted`). */
  results?: ActionResult[];
}

export interface IsmNext<P extends ProcessRef = ProcessRef> {
  process: P;
  executeNow?: boolean;
  params?: Record<string, unknown>;
}

/** Everything an ISM run produced, for callers that want more than the process return value. */
export interface IsmOutput<P extends ProcessRef = ProcessRef> {
  outcome: IsmOutcome;
  /** The working memory at the end, with the playbook region taken out again. */
  workingMemory: WorkingMemory;
  /** The internal memory at the end; its `ism-decisions` region mirrors `decisions`. */
  internalMemory: WorkingMemory;
  decisions: DecisionLogEntry[];
  /** Loops that ran their handlers. */
  loops: number;
  /** Set when `outcome` is `transition`. */
  next?: IsmNext<P>;
  /** Set when `outcome` is `failed`: what went wrong, in words fit for a log. */
  error?: string;
}

/** Where ISM log lines go; the soul turn's `log` by default. */
export type IsmLogger = (message: string, data?: Record<string, unknown>) => void;
