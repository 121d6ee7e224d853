import type { InputMemory, Memory } from "../../runtime/cognition/index.ts";
import { regionOf } from "../../runtime/cognition/index.ts";
import type { WorkingMemory } from "../../runtime/cognition/index.ts";

/**
 * While the ISM runs, its goal and playbook sit in the working memory as a system region, so
 * every cognitive step a handler calls is grounded in them, not only the choice step.
 *
 * The region is scaffolding for this run and is taken out of the memory the ISM returns:
 * working memory outlives the turn, and a playbook left behind would steer later processes
 * and pile up on every ISM run. If the caller's memory already held the region (an ISM
 * started from inside another ISM's handler), its previous content is put back instead.
 */
export const PLAYBOOK_REGION = "ism-playbook";

export function playbookMemory(goal: string, playbook: string): InputMemory {
  return { role: "system", content: `## Goal\n${goal}\n\n## Playbook\n${playbook}` };
}

export function withPlaybook(memory: WorkingMemory, goal: string, playbook: string): WorkingMemory {
  return memory.withRegion(PLAYBOOK_REGION, playbookMemory(goal, playbook));
}

/** The region as the caller had it (usually none), read before the ISM replaces it. */
export function savedPlaybookRegion(memory: WorkingMemory): readonly Memory[] {
  // runIsm awaits `finished` first; a caller that builds the input itself with a memory still
  // streaming gets the region removed at the end rather than an error at the start.
  if (memory.isPending) return [];
  return memory.memories.filter((m) => regionOf(m) === PLAYBOOK_REGION);
}

export function restorePlaybookRegion(memory: WorkingMemory, saved: readonly Memory[]): WorkingMemory {
  return saved.length ? memory.withRegion(PLAYBOOK_REGION, ...saved) : memory.withoutRegions(PLAYBOOK_REGION);
}
