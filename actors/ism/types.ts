import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { ProcessRef, ProcessResult } from "../vocabulary/index.ts";

/**
 * The shapes an ISM shares with blueprints and with the soul machine. They follow Open
 * Souls' `implicitSemanticMachine` so blueprints port unchanged: an action's handler gets
 * `(workingMemory, internalMemory, recurse)` and either recurses, returns a memory, or
 * returns a process transition tuple.
 */

/*
 * The process shapes (`ProcessRef`, `ProcessResult`, `TransitionOptions`) are the soul's:
 * an ISM returns exactly what a mental process returns, so `return implicitSemanticMachine(...)`
 * type-checks as the end of a process.
 */

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
export type ActionHandlerResult = RecurseSignal | ProcessResult;

export type ActionHandler = (
  workingMemory: WorkingMemory,
  internalMemory: WorkingMemory,
  recurse: Recurse,
) => ActionHandlerResult | Promise<ActionHandlerResult>;

/** One choice the soul can make. */
export interface IsmAction {
  /** What the model answers to pick it; unique, and never `DONE` (reserved for "goal met"). */
  name: string;
  /** Shown to the model next to the name: this is how it decides. */
  description: string;
  handleActionUse: ActionHandler;
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

/** Where a `transition` outcome goes. Open Souls-style extra option keys are folded into `params`. */
export interface IsmNext {
  process: ProcessRef;
  executeNow?: boolean;
  params?: Record<string, unknown>;
}

/** Everything an ISM run produced, for callers that want more than the process return value. */
export interface IsmOutput {
  outcome: IsmOutcome;
  /**
   * The working memory at the end, without the ISM's scaffolding: the `ism-playbook` region is
   * taken out (or put back as the caller had it) and no `ism-decisions` region is left in it.
   */
  workingMemory: WorkingMemory;
  /** The internal memory at the end; its `ism-decisions` region mirrors `decisions`. */
  internalMemory: WorkingMemory;
  decisions: DecisionLogEntry[];
  /** Loops that ran their handlers. */
  loops: number;
  /** Set when `outcome` is `transition`. */
  next?: IsmNext;
  /** Set when `outcome` is `failed`: what went wrong, in words fit for a log. */
  error?: string;
}

/** Where ISM log lines go; the soul turn's `log` by default. */
export type IsmLogger = (message: string, data?: Record<string, unknown>) => void;
