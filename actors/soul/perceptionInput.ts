import { nextUlid } from "../../runtime/bus/index.ts";
import type { ScheduledEntry } from "../../runtime/store/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { Perception, PerceptionInput } from "../vocabulary/index.ts";

/** Checks a perception before it reaches the inbox and fills in its id and time: bad input fails here, clearly. */
export function normalizePerception(input: PerceptionInput, blueprint: SoulBlueprint, now: number): Perception {
  for (const field of ["action", "content", "name"] as const) {
    if (typeof input[field] !== "string") throw new TypeError(`perception.${field} must be a string, got ${typeof input[field]}`);
  }
  if (input.process !== undefined && !blueprint.processes.has(input.process)) {
    throw new Error(`perception routed to unknown process '${input.process}' of soul '${blueprint.name}'`);
  }
  return { ...input, id: input.id ?? nextUlid(), ts: input.ts ?? now };
}

/** The perception a fired schedule becomes: internal, routed to its process, keyed by the schedule's id. */
export function scheduledPerception(entry: ScheduledEntry, soulName: string): PerceptionInput {
  const stored = entry.perception as Partial<Perception>;
  const params = entry.params ?? stored.params;
  return {
    action: stored.action ?? "scheduled",
    content: stored.content ?? "",
    name: stored.name ?? soulName,
    internal: true,
    process: entry.process,
    id: entry.id,
    ts: entry.at,
    ...(params ? { params } : {}),
    ...(stored.meta ? { meta: stored.meta } : {}),
  };
}
