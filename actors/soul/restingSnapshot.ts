/**
 * A soul at rest: the machine context and persisted snapshot of a soul idle in a process,
 * which every turn commit stores, and the process a stored snapshot rests in.
 *
 * It exists apart from the machine's definition because it is what the store sees of the
 * machine at each turn boundary (built once per process and cached for the common case).
 */
import type { SoulBlueprint } from "./defineSoul.ts";
import type { ProcessParams } from "../vocabulary/index.ts";
import { PerceptionQueue } from "./PerceptionQueue.ts";
import type { SoulMachine, SoulMachineContext } from "./soulMachine.ts";

/** The context of a soul at rest in `current`: what a turn-boundary snapshot holds. */
export function restingContext(current: string, nextParams: ProcessParams | null): SoulMachineContext {
  return { current, queue: PerceptionQueue.empty, perception: null, chain: 0, runParams: null, nextParams, stopping: false };
}

/** The persisted snapshot of a soul resting in `current`, as a turn commit stores it. */
export function restingSnapshot(machine: SoulMachine, current: string, nextParams: ProcessParams | null): unknown {
  // Resting snapshots with no params are the same every time: built once per process, as
  // every turn commit stores one. Nothing mutates them (XState replaces context, never edits it).
  if (nextParams === null) {
    let cache = restingCache.get(machine);
    if (!cache) restingCache.set(machine, (cache = new Map()));
    let cached = cache.get(current);
    if (cached === undefined) cache.set(current, (cached = buildRestingSnapshot(machine, current, null)));
    return cached;
  }
  return buildRestingSnapshot(machine, current, nextParams);
}

const restingCache = new WeakMap<SoulMachine, Map<string, unknown>>();

function buildRestingSnapshot(machine: SoulMachine, current: string, nextParams: ProcessParams | null): unknown {
  const snapshot = machine.resolveState({ value: { [current]: "idle" }, context: restingContext(current, nextParams) });
  return machine.getPersistedSnapshot(snapshot);
}

/** The process a persisted snapshot rests in, when it is a resting snapshot of this blueprint. */
export function restingProcessOf(blueprint: SoulBlueprint, snapshot: unknown): string | undefined {
  const value = (snapshot as { value?: unknown } | undefined)?.value;
  if (!value || typeof value !== "object") return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1) return undefined;
  const [name] = keys;
  return blueprint.processes.has(name) && (value as Record<string, unknown>)[name] === "idle" ? name : undefined;
}
