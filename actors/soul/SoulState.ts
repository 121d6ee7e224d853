import type { Memory } from "../../runtime/cognition/index.ts";
import { WorkingMemory, type SerializedWorkingMemory } from "../../runtime/cognition/index.ts";
import type { ActorState } from "../../runtime/store/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { ProcessParams } from "../vocabulary/index.ts";
import { restingProcessOf } from "./restingSnapshot.ts";

/**
 * A soul's committed state, held live between turns. It is replaced as a whole when a commit
 * succeeds and never mutated, so a turn can read it while another write is in flight.
 */
export interface SoulState {
  readonly memory: WorkingMemory;
  readonly soulMemory: Readonly<Record<string, unknown>>;
  readonly processMemory: Readonly<Record<string, readonly unknown[]>>;
  readonly currentProcess: string;
  readonly previousProcess?: string;
  readonly invocationCounts: Readonly<Record<string, number>>;
  readonly turn: number;
  /** Params a transition left for the current process's next run. */
  readonly nextParams: ProcessParams | null;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export function initialSoulState(soulName: string, initialProcess: string): SoulState {
  return {
    memory: new WorkingMemory({ soulName }),
    soulMemory: {},
    processMemory: {},
    currentProcess: initialProcess,
    invocationCounts: {},
    turn: 0,
    nextParams: null,
    metadata: {},
  };
}

export function soulStateFromActorState(soulName: string, state: ActorState, nextParams: ProcessParams | null): SoulState {
  const serialized = state.workingMemory as SerializedWorkingMemory | undefined;
  const memory =
    serialized && Array.isArray(serialized.memories)
      ? WorkingMemory.fromJSON({ ...serialized, soulName: serialized.soulName ?? soulName })
      : new WorkingMemory({ soulName });
  const restored: SoulState = {
    memory,
    soulMemory: state.soulMemory ?? {},
    processMemory: state.processMemory ?? {},
    currentProcess: state.currentProcess,
    invocationCounts: state.invocationCounts ?? {},
    turn: state.turn ?? 0,
    nextParams,
    metadata: state.metadata ?? {},
  };
  return state.previousProcess === undefined ? restored : { ...restored, previousProcess: state.previousProcess };
}

export function toActorState(state: SoulState, snapshot: unknown): ActorState {
  const out: ActorState = {
    workingMemory: serializeMemory(state.memory),
    soulMemory: state.soulMemory as Record<string, unknown>,
    processMemory: state.processMemory as Record<string, unknown[]>,
    currentProcess: state.currentProcess,
    invocationCounts: state.invocationCounts as Record<string, number>,
    turn: state.turn,
    snapshot,
    metadata: state.metadata as Record<string, unknown>,
  };
  if (state.previousProcess !== undefined) out.previousProcess = state.previousProcess;
  return out;
}

/**
 * The state a soul starts from: what the store holds, resting in the process its snapshot
 * names. A process the blueprint no longer has is reported, and the soul starts over in the
 * initial process with its memories intact.
 */
export function restoreSoulState(blueprint: SoulBlueprint, stored: ActorState | undefined): { state: SoulState; problem?: string } {
  if (!stored) return { state: initialSoulState(blueprint.name, blueprint.initialProcess) };
  const context = (stored.snapshot as { context?: { nextParams?: ProcessParams | null } } | undefined)?.context;
  const state = soulStateFromActorState(blueprint.name, stored, context?.nextParams ?? null);
  const current = restingProcessOf(blueprint, stored.snapshot) ?? state.currentProcess;
  if (blueprint.processes.has(current)) return { state: current === state.currentProcess ? state : { ...state, currentProcess: current } };
  return {
    state: { ...state, currentProcess: blueprint.initialProcess, nextParams: null },
    problem: `stored process '${current}' is not in blueprint '${blueprint.name}'; starting in '${blueprint.initialProcess}'`,
  };
}

/**
 * WorkingMemory's plain-data form without `toJSON()`'s defensive copy: its memories are
 * frozen and never change, so the store can encode them as they are. This runs on every
 * turn, over the whole conversation.
 */
function serializeMemory(memory: WorkingMemory): SerializedWorkingMemory {
  return { soulName: memory.soulName, memories: memory.memories as Memory[], regionOrder: memory.regionOrder as string[] };
}
