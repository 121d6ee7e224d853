import type { CognitionContext } from "../../runtime/cognition/index.ts";
import type { Memory } from "../../runtime/cognition/index.ts";
import { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { TurnScope } from "../vocabulary/index.ts";
import { DECISIONS_REGION } from "./decisionLog.ts";
import { describeError } from "./handlerResult.ts";
import { captureScope, type IsmScope } from "./ismScope.ts";
import { restorePlaybookRegion, savedPlaybookRegion, withPlaybook } from "./playbookRegion.ts";
import {
  DONE_ACTION,
  type DecisionLogEntry,
  type IsmAction,
  type IsmLogger,
  type IsmNext,
  type IsmOutcome,
  type IsmOutput,
} from "./types.ts";

export const DEFAULT_MAX_LOOPS = 5;

/** How many times an invalid (unknown-action) choice is asked again within one loop. */
export const MAX_CHOICE_RETRIES = 1;

/** Open Souls' `implicitSemanticMachine` arguments, plus two hooks for callers outside a soul. */
export interface IsmOptions {
  workingMemory: WorkingMemory;
  /** The ISM's own memory (Open Souls blueprints often pass the working memory). Default: an empty one for the soul. */
  internalMemory?: WorkingMemory;
  goal: string;
  playbook: string;
  actions: readonly IsmAction[];
  /** Loops (choice + handlers) before the ISM gives up with `exhausted`. Default 5. */
  maxLoops?: number;
  /** `provider:model` for the action choice; the turn's default model otherwise. */
  model?: string;
  /** Checked before every loop; true ends the ISM with `interrupted`. Default: the running turn has pending perceptions (or was cancelled). */
  interrupted?: () => boolean;
  /** Default: the running turn's log, or nowhere outside a turn. */
  log?: IsmLogger;
}

/** What the ISM machine is started with: the options and the scope they were given in (see ismInput.ts). */
export interface IsmMachineInput extends IsmOptions {
  /** Bound around every step and handler; captured where the machine starts when absent. */
  cognition?: CognitionContext;
  turn?: TurnScope;
}

export interface IsmContext {
  workingMemory: WorkingMemory;
  internalMemory: WorkingMemory;
  goal: string;
  playbook: string;
  actions: readonly IsmAction[];
  maxLoops: number;
  model: string | undefined;
  interrupted: () => boolean;
  log: IsmLogger;
  scope: IsmScope;
  /** The playbook region as the caller had it, put back at the end. */
  savedPlaybook: readonly Memory[];
  /** Loops whose handlers ran. */
  loop: number;
  /** Choice retries used in the current loop. */
  retries: number;
  decisions: DecisionLogEntry[];
  /** The checked action names the handlers run for, in `acting`. */
  chosen: string[];
  /** A bad configuration, found at start: the machine goes straight to `failed`. */
  configError: string | undefined;
  outcome: IsmOutcome | undefined;
  next: IsmNext | undefined;
  error: string | undefined;
}

/** The default interruption test: the turn has perceptions waiting, or was cancelled. */
export function turnInterrupted(turn: TurnScope | undefined): () => boolean {
  if (!turn) return () => false;
  return () => turn.signal.aborted || turn.pendingPerceptions().length > 0;
}

export function turnLogger(turn: TurnScope | undefined): IsmLogger {
  return turn ? (message, data) => turn.log(message, data) : () => undefined;
}

export function initialContext(input: IsmMachineInput): IsmContext {
  // Inputs built by buildIsmInput carry both; a hand-built input falls back to where the machine starts.
  const scope: IsmScope = input.cognition && input.turn ? { cognition: input.cognition, turn: input.turn } : captureScope();
  if (input.cognition) scope.cognition = input.cognition;
  if (input.turn) scope.turn = input.turn;
  const configError = validateInput(input);
  const maxLoops = Math.floor(input.maxLoops ?? DEFAULT_MAX_LOOPS);
  const base = input.workingMemory;
  return {
    workingMemory: configError ? base : withPlaybook(base, input.goal, input.playbook),
    internalMemory: input.internalMemory ?? new WorkingMemory({ soulName: base.soulName }),
    goal: input.goal,
    playbook: input.playbook,
    actions: input.actions,
    maxLoops,
    model: input.model,
    interrupted: input.interrupted ?? turnInterrupted(scope.turn),
    log: input.log ?? turnLogger(scope.turn),
    scope,
    savedPlaybook: configError ? [] : savedPlaybookRegion(base),
    loop: 0,
    retries: 0,
    decisions: [],
    chosen: [],
    configError,
    outcome: undefined,
    next: undefined,
    error: configError,
  };
}

/**
 * Blueprints may be plain JavaScript, so the configuration is checked at run time. A bad one
 * is a `failed` outcome with the reason, like every other ISM failure, rather than a throw in
 * the middle of a soul's turn.
 */
export function validateInput(input: IsmMachineInput): string | undefined {
  if (!(input.workingMemory instanceof WorkingMemory)) return "workingMemory must be a WorkingMemory";
  if (input.internalMemory !== undefined && !(input.internalMemory instanceof WorkingMemory)) {
    return "internalMemory must be a WorkingMemory";
  }
  return validateConfig(input);
}

/** The part of the input a blueprint fixes once: goal, playbook, actions, loop bound. */
export function validateConfig(input: Pick<IsmMachineInput, "goal" | "playbook" | "actions" | "maxLoops">): string | undefined {
  if (typeof input.goal !== "string" || !input.goal.trim()) return "goal must be a non-empty string";
  if (typeof input.playbook !== "string") return "playbook must be a string";
  if (input.maxLoops !== undefined && !(Number.isFinite(input.maxLoops) && input.maxLoops >= 0)) {
    return `maxLoops must be a number >= 0 (got ${String(input.maxLoops)})`;
  }
  if (!Array.isArray(input.actions) || input.actions.length === 0) return "actions must be a non-empty array";
  const seen = new Set<string>();
  for (const action of input.actions) {
    const name: unknown = action?.name;
    if (typeof name !== "string" || !name.trim()) return "every action needs a non-empty name";
    const key = name.trim().toLowerCase();
    if (key === DONE_ACTION.toLowerCase()) return `"${DONE_ACTION}" is reserved for "the goal is satisfied"; rename that action`;
    if (seen.has(key)) return `two actions are named ${JSON.stringify(name)} (names are matched ignoring case)`;
    seen.add(key);
    if (typeof action.description !== "string") return `action ${name} needs a description`;
    if (typeof action.handleActionUse !== "function") return `action ${name} needs a handleActionUse function`;
  }
  return undefined;
}

/** The machine's output: the memories handed back without the ISM's own playbook region. */
export function outputFromContext(context: IsmContext): IsmOutput {
  let workingMemory = context.workingMemory;
  try {
    if (!context.configError) {
      // Blueprints often pass the working memory as the internal memory too (Open Souls' own
      // example does), so the mirrored decision log can ride along into the working memory;
      // it is the ISM's scaffolding like the playbook, and is in `decisions` for whoever wants it.
      workingMemory = restorePlaybookRegion(workingMemory, context.savedPlaybook).withoutRegions(DECISIONS_REGION);
    }
  } catch (error) {
    // Only a memory that is not a WorkingMemory gets here; hand it back untouched.
    safeLog(context.log, `ISM: could not remove the playbook region: ${describeError(error)}`);
  }
  const output: IsmOutput = {
    outcome: context.outcome ?? "failed",
    workingMemory,
    internalMemory: context.internalMemory,
    decisions: context.decisions,
    loops: context.loop,
  };
  if (context.next) output.next = context.next;
  if (context.error !== undefined) output.error = context.error;
  return output;
}

/** Calls blueprint-supplied callbacks so that their failure cannot break the machine. */
export function safeLog(log: IsmLogger, message: string, data?: Record<string, unknown>): void {
  try {
    log(message, data);
  } catch {
    // A failing logger must not change what the soul does.
  }
}
