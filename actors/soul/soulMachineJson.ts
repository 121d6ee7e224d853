/**
 * A soul's machine as `createMachine` JSON (`ensoul export`, the debugger page): what
 * Stately's tools draw and simulate.
 *
 * It is the soul's process graph, not the compiled soul machine (soulMachine.ts): that one
 * has `idle`/`running`/`subprocesses` in every process and routing states besides, which say
 * how a turn runs, not where the soul can go. Here each mental process is one state, each
 * hand-over the blueprint allows is one edge (`process.<next>`), and an ISM process holds
 * the ISM machine as its child state `ism`, drawn as machineModel.ts draws any machine. A
 * process may always stay in itself; that is no edge.
 */
import { ISM_PROCESS, isIsmProcess, type IsmProcessMarker } from "../ism/index.ts";
import { stateJson, type JsonObject, type MachineJson, type StateJson, type TransitionJson } from "../vocabulary/index.ts";
import type { DeclaredProcess, SoulBlueprint } from "./defineSoul.ts";

/** The key of an ISM process's child state: the ISM machine. */
export const ISM_STATE = "ism";

/** The event of the edge to process `to`. */
export function processEvent(to: string): string {
  return `process.${to}`;
}

/** The ISM an ISM process runs, as the child state of its process. */
function ismJson(marker: IsmProcessMarker, process: string, rootId: string): StateJson {
  const ism = stateJson(marker.machine.root, { rootId, prefix: [process, ISM_STATE] });
  const { config } = marker;
  const ensoul: JsonObject = {
    kind: "ism",
    goal: config.goal,
    actions: config.actions.map(({ name, description }) => ({ name, description })),
  };
  if (config.maxLoops !== undefined) ensoul["maxLoops"] = config.maxLoops;
  if (config.model !== undefined) ensoul["model"] = config.model;
  return {
    description: "The Implicit Semantic Machine: toward the process's goal, the soul chooses its own actions in a loop.",
    ...ism,
    meta: { ...(ism.meta ?? {}), ensoul: { ...ensoul, ...((ism.meta?.["ensoul"] as JsonObject | undefined) ?? {}) } },
  };
}

function processJson(declared: DeclaredProcess, rootId: string): StateJson {
  const marker = isIsmProcess(declared.process) ? declared.process[ISM_PROCESS] : undefined;
  const out: StateJson = {};
  if (marker) out.description = `An ISM process: ${marker.config.goal}`;
  if (declared.next.length > 0) {
    out.on = Object.fromEntries(declared.next.map((to): [string, TransitionJson] => [processEvent(to), { target: to }]));
  }
  if (marker) {
    out.initial = ISM_STATE;
    out.states = { [ISM_STATE]: ismJson(marker, declared.name, rootId) };
  }
  out.meta = { ensoul: { kind: "process", process: declared.name, next: [...declared.next], ism: marker !== undefined } };
  return out;
}

/** A soul's process graph: one state per mental process, an edge per allowed hand-over, the ISM as a child. */
export function soulMachineJson(blueprint: SoulBlueprint): MachineJson {
  const id = blueprint.name;
  const states: Record<string, StateJson> = {};
  for (const declared of blueprint.processes.values()) states[declared.name] = processJson(declared, id);
  return {
    id,
    description: `${blueprint.name}'s mental processes: one state per process, an edge per hand-over the blueprint allows (a process may always stay in itself).`,
    initial: blueprint.initialProcess,
    states,
    meta: {
      ensoul: {
        kind: "soul",
        soul: blueprint.name,
        initialProcess: blueprint.initialProcess,
        processes: [...blueprint.processes.keys()],
        subprocesses: blueprint.subprocesses.map((s) => s.name),
      },
    },
  };
}
