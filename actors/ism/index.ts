/**
 * The Implicit Semantic Machine: the soul chooses its own actions, in a loop, toward a goal.
 * `implicitSemanticMachine` is the Open Souls call for inside a mental process; `ismProcess`
 * makes a whole process of it; `ismMachine` is the XState machine both run.
 */
export { implicitSemanticMachine, runIsm, toProcessReturn } from "./implicitSemanticMachine.ts";
export { ismProcess, isIsmProcess, ISM_PROCESS } from "./ismProcess.ts";
export type { IsmMentalProcess, IsmProcessConfig, IsmProcessMarker } from "./ismProcess.ts";
export { ismMachine } from "./ismMachine.ts";
export type { IsmEvent, IsmMachine } from "./ismMachine.ts";
export { buildIsmInput } from "./ismInput.ts";
export { DEFAULT_MAX_LOOPS, MAX_CHOICE_RETRIES } from "./ismContext.ts";
export type { IsmContext, IsmMachineInput, IsmOptions } from "./ismContext.ts";
export { chooseAction, buildChoicePrompt, checkChoice } from "./chooseAction.ts";
export type { ActionChoice, ChoicePrompt, ChoiceResult } from "./chooseAction.ts";
export { recurse, isRecurseSignal } from "./handlerResult.ts";
export { DECISIONS_REGION, formatDecision, formatDecisionLog } from "./decisionLog.ts";
export { PLAYBOOK_REGION } from "./playbookRegion.ts";
export { DONE_ACTION, ISM_RECURSE } from "./types.ts";
export type {
  ActionHandler,
  ActionHandlerResult,
  ActionResult,
  ActionResultKind,
  DecisionLogEntry,
  IsmAction,
  IsmLogger,
  IsmNext,
  IsmOutcome,
  IsmOutput,
  Recurse,
  RecurseSignal,
} from "./types.ts";
