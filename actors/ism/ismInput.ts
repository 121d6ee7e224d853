import { currentCognition } from "../../runtime/cognition/CognitionContext.ts";
import type { WorkingMemory } from "../../runtime/cognition/WorkingMemory.ts";
import { currentTurn, type TurnScope } from "../soul/turnScope.ts";
import { turnInterrupted, turnLogger, type IsmMachineInput } from "./ismContext.ts";
import type { IsmAction, IsmLogger } from "./types.ts";

/** Open Souls' `implicitSemanticMachine` arguments, plus two hooks for callers outside a soul. */
export interface IsmOptions {
  workingMemory: WorkingMemory;
  /** The ISM's own memory (Open Souls blueprints often pass the working memory). Default: empty. */
  internalMemory?: WorkingMemory;
  goal: string;
  playbook: string;
  actions: readonly IsmAction[];
  /** Default 5. */
  maxLoops?: number;
  /** `provider:model` for the action choice; the turn's default model otherwise. */
  model?: string;
  /** Default: the running turn has pending perceptions (or was cancelled). */
  interrupted?: () => boolean;
  /** Default: the running turn's log. */
  log?: IsmLogger;
}

/**
 * Turns the options into the machine's input, here, in the caller's async context: this is
 * where the turn scope and cognition context are still the caller's (see ismScope.ts).
 */
export function buildIsmInput(
  options: IsmOptions,
  turn: TurnScope | undefined = currentTurn(),
): IsmMachineInput {
  const input: IsmMachineInput = {
    workingMemory: options.workingMemory,
    goal: options.goal,
    playbook: options.playbook,
    actions: options.actions,
    interrupted: options.interrupted ?? turnInterrupted(turn),
    log: options.log ?? turnLogger(turn),
  };
  input.cognition = currentCognition();
  if (turn) input.turn = turn;
  if (options.internalMemory !== undefined) input.internalMemory = options.internalMemory;
  if (options.maxLoops !== undefined) input.maxLoops = options.maxLoops;
  if (options.model !== undefined) input.model = options.model;
  return input;
}
