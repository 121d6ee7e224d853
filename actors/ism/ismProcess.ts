import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import { toProcessReturn, runIsm } from "./implicitSemanticMachine.ts";
import { validateConfig, type IsmMachineInput, type IsmOptions } from "./ismContext.ts";
import { buildIsmInput } from "./ismInput.ts";
import { ismMachine, type IsmMachine } from "./ismMachine.ts";
import type { MentalProcess, MentalProcessArgs, ProcessResult } from "../vocabulary/index.ts";
import type { IsmAction, IsmOutput } from "./types.ts";

/** A mental process whose whole body is one ISM: the blueprint gives goal, playbook and actions. */
export interface IsmProcessConfig {
  /** The process's name (the function's `name`, which is how processes are named in Open Souls). */
  name?: string;
  goal: string;
  playbook: string;
  actions: readonly IsmAction[];
  maxLoops?: number;
  model?: string;
}

/**
 * Marks a process built by `ismProcess`. A symbol (registered, so two copies of this module
 * agree) because a process is a plain function and any string property could collide with a
 * blueprint's own.
 */
export const ISM_PROCESS: unique symbol = Symbol.for("ensoul.ism.process");

/**
 * What the soul machine reads from a marked process to make the process state's sub-machine
 * the ISM itself instead of running the process function (which would start the ISM as a
 * child of its own): the state's `running` becomes `preparing -> ism -> finishing`, where
 * `ism` invokes `machine` (registered in the soul machine as the named actor `ism`) with
 * `input(memory)`, and `finishing` maps its output with `toProcessReturn`. See
 * actors/soul/soulMachine.ts and TurnRunner.prepareIsm / finishIsm.
 */
export interface IsmProcessMarker {
  readonly config: IsmProcessConfig;
  readonly machine: IsmMachine;
  /** The machine input for one run. Call it inside the turn (runInTurn/runWithCognition): it captures both. */
  input(workingMemory: WorkingMemory): IsmMachineInput;
  toProcessReturn(output: IsmOutput): ProcessResult;
}

export type IsmMentalProcess = MentalProcess & { readonly [ISM_PROCESS]: IsmProcessMarker };

/**
 * Builds the process. It works as an ordinary mental process too (a soul that knows nothing of
 * the marker just calls it), so the marker is an optimisation of the process graph, not a
 * second code path with its own semantics. The configuration is checked here, when the
 * blueprint loads, so a mistake fails at start-up and not in the middle of a conversation.
 */
export function ismProcess(config: IsmProcessConfig): IsmMentalProcess {
  const problem = validateConfig(config);
  if (problem) throw new TypeError(`ismProcess${config.name ? ` ${config.name}` : ""}: ${problem}`);
  const options = (workingMemory: WorkingMemory): IsmOptions => {
    const opts: IsmOptions = { workingMemory, goal: config.goal, playbook: config.playbook, actions: config.actions };
    if (config.maxLoops !== undefined) opts.maxLoops = config.maxLoops;
    if (config.model !== undefined) opts.model = config.model;
    return opts;
  };
  const run = async ({ workingMemory }: MentalProcessArgs): Promise<ProcessResult> =>
    toProcessReturn(await runIsm(options(workingMemory)));
  const marker: IsmProcessMarker = Object.freeze({
    config,
    machine: ismMachine,
    input: (workingMemory: WorkingMemory) => buildIsmInput(options(workingMemory)),
    toProcessReturn: (output: IsmOutput) => toProcessReturn(output),
  });
  Object.defineProperty(run, ISM_PROCESS, { value: marker, enumerable: false });
  if (config.name) Object.defineProperty(run, "name", { value: config.name });
  return run as IsmMentalProcess;
}

export function isIsmProcess(value: unknown): value is IsmMentalProcess {
  if (typeof value !== "function") return false;
  const marker: unknown = (value as Partial<Record<typeof ISM_PROCESS, unknown>>)[ISM_PROCESS];
  return typeof marker === "object" && marker !== null && "machine" in marker && "input" in marker;
}
