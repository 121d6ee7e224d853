/**
 * The contract between the soul machine and the runtime that does its work: the inputs and
 * outputs of the machine's invoked phases (a process run, an ISM's prepare and finish, the
 * subprocesses), the host interface, and the binding of a soul actor's system to its host.
 *
 * It exists apart from the machine because one machine serves every soul of a blueprint: the
 * machine decides what runs when, and reaches the soul's own runtime through this binding.
 */
import type { IsmMachineInput } from "../ism/index.ts";
import type { IsmOutput } from "../ism/index.ts";
import type { ProcessParams } from "../vocabulary/index.ts";
import type { Perception } from "../vocabulary/index.ts";

export interface RunInput {
  process: string;
  perception: Perception;
  params: ProcessParams | null;
  /** executeNow hand-overs before this run; 0 starts a turn. */
  chain: number;
  /** The process the turn started from: where a failed or routed turn returns to. */
  current: string;
}

export interface RunOutput {
  /** The process that ran. */
  process: string;
  next: string;
  executeNow: boolean;
  params: ProcessParams | null;
}

/** What `preparing` hands on; the ISM's input itself stays with the runtime (it holds the turn). */
export interface IsmPrepared {
  process: string;
  /** Memories the ISM starts from: a size for the inspector, not the memory. */
  memories: number;
}

/** How the ISM phase ended: its output, or (never by design) the machine's error. */
export type IsmResult = { output: IsmOutput; error?: undefined } | { output?: undefined; error: string };

export interface IsmFinishInput extends RunInput {
  result: IsmResult;
}

export interface SubprocessInput {
  /** The process the turn ended in. */
  process: string;
  next: string;
  params: ProcessParams | null;
  perception: Perception;
  /** Perceptions were already waiting when the turn ended: they cancel the subprocesses before these start. */
  queued?: boolean;
}

export interface SubprocessOutput {
  next: string;
  params: ProcessParams | null;
}

/** What the machine needs from the soul it runs in. */
export interface SoulMachineHost {
  runProcess(input: RunInput, signal: AbortSignal): Promise<RunOutput>;
  /** An ISM process's first phase: integrate the perception, open the draft, build the ISM's input. */
  prepareIsm(input: RunInput, signal: AbortSignal): Promise<IsmPrepared>;
  /** The input `prepareIsm` built for the ISM machine of `process`. */
  ismInput(process: string): IsmMachineInput;
  /** An ISM process's last phase: the output as a process return, transition checks, commit. */
  finishIsm(input: IsmFinishInput, signal: AbortSignal): Promise<RunOutput>;
  runSubprocesses(input: SubprocessInput, signal: AbortSignal): Promise<SubprocessOutput>;
  cancelSubprocesses(): void;
  whisper(content: string, source: string): void;
}

/** Keyed by actor system: each soul actor is the root of its own system. */
const hosts = new WeakMap<object, SoulMachineHost>();

/** Connects a soul actor's system to the runtime that does its work; call before `start()`. */
export function bindSoulMachineHost(system: object, host: SoulMachineHost): void {
  hosts.set(system, host);
}

export function hostOf(system: object): SoulMachineHost {
  const host = hosts.get(system);
  if (!host) throw new Error("soul machine started without a runtime: use createSoul()");
  return host;
}
