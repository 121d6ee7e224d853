import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { Perception } from "./Perception.ts";

/** Static props handed to a process by the transition that chose it (`{ wasProvoked: true }`). */
export type ProcessParams = Record<string, unknown>;

export interface MentalProcessArgs<P extends ProcessParams = ProcessParams> {
  workingMemory: WorkingMemory;
  params: P;
}

/**
 * How a process hands over. Open Souls spreads params into this object
 * (`{ ...params, executeNow }`); ensoul also accepts them under `params`. Keys other than
 * `executeNow` and `params` are read as params, so both styles port unchanged.
 */
export interface TransitionOptions {
  executeNow?: boolean;
  params?: ProcessParams;
  [param: string]: unknown;
}

/** A process named by its function (Open Souls style) or by its blueprint name. */
export type ProcessRef = MentalProcess | string;

export type ProcessResult =
  | WorkingMemory
  | readonly [WorkingMemory, ProcessRef]
  | readonly [WorkingMemory, ProcessRef, TransitionOptions];

/**
 * A mental process: one behavioural mode of the soul. Written as a method type so a process
 * that declares its own params (`MentalProcess<{ wasProvoked: boolean }>`) still fits a
 * blueprint's table of processes; params are checked where the process reads them.
 */
export type MentalProcess<P extends ProcessParams = ProcessParams> = {
  bivarianceHack(args: MentalProcessArgs<P>): Promise<ProcessResult> | ProcessResult;
}["bivarianceHack"];

/**
 * Builds the memory a process starts from: the persona, then the new perception. Runs once
 * per turn, before the first process of the turn.
 */
export type MemoryIntegrator = (args: MemoryIntegratorArgs) => Promise<WorkingMemory> | WorkingMemory;

export interface MemoryIntegratorArgs {
  perception: Perception;
  workingMemory: WorkingMemory;
  soul: { name: string; persona: string };
  /** The process that will run for this perception. */
  currentProcess: string;
}
