import { currentCognition } from "../../runtime/cognition/index.ts";
import { currentTurn, type TurnScope } from "../vocabulary/index.ts";
import { turnInterrupted, turnLogger, type IsmMachineInput, type IsmOptions } from "./ismContext.ts";

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
