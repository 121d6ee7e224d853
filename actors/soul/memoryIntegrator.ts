import type { InputMemory } from "../../runtime/cognition/index.ts";
import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { MemoryIntegratorArgs } from "../vocabulary/index.ts";
import type { Perception } from "../vocabulary/index.ts";

/** The region that holds who the soul is; Open Souls blueprints read it by this name. */
export const CORE_REGION = "core";

/**
 * Open Souls' default integration: the persona as the `core` system region, then the
 * perception as a line of conversation. A perception the soul made itself (a scheduled
 * event) enters as its own assistant-role memory, so models do not read it as user input.
 */
export function defaultMemoryIntegrator({ perception, workingMemory, soul }: MemoryIntegratorArgs): WorkingMemory {
  const core = workingMemory.find((m) => m.region === CORE_REGION);
  const withCore =
    core && core.content === soul.persona && core.role === "system"
      ? workingMemory
      : workingMemory.withRegion(CORE_REGION, { role: "system", content: soul.persona });
  return withCore.withMemory(perceptionMemory(perception));
}

/** One perception as a memory: `${name} ${action}: "${content}"`. */
export function perceptionMemory(perception: Perception): InputMemory {
  const content = `${perception.name} ${perception.action}: "${perception.content}"`;
  const metadata = { perceptionId: perception.id };
  return perception.internal
    ? { role: "assistant", content, metadata }
    : { role: "user", content, name: perception.name, metadata };
}
