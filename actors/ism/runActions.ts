import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import { classifyHandlerResult, describeError, recurse } from "./handlerResult.ts";
import type { ActionResult, IsmAction, IsmNext } from "./types.ts";

export interface ActingInput {
  actions: readonly IsmAction[];
  /** Checked names, in the order the model gave them. */
  chosen: readonly string[];
  workingMemory: WorkingMemory;
  internalMemory: WorkingMemory;
}

/** How a loop's handlers ended, with the memories as the last handler left them. */
export type ActingResult = {
  workingMemory: WorkingMemory;
  internalMemory: WorkingMemory;
  results: ActionResult[];
} & (
  | { kind: "continue" }
  | { kind: "done" }
  | { kind: "transition"; next: IsmNext }
  | { kind: "threw"; action: string; error: string }
);

/**
 * Runs the chosen handlers one after another, each on the memories the previous one left.
 * A handler that recurses hands over to the next; one that ends the loop (a memory or a
 * transition) stops the sequence there and the rest are skipped, because the soul has
 * already committed to finishing. A throw is caught and reported as a result, never
 * rethrown: the memory built so far is worth keeping, and the soul must keep running.
 */
export async function runChosenActions(input: ActingInput): Promise<ActingResult> {
  const byName = new Map(input.actions.map((a) => [a.name, a] as const));
  let workingMemory = input.workingMemory;
  let internalMemory = input.internalMemory;
  const results: ActionResult[] = [];
  const skipRest = (from: number) => {
    for (const name of input.chosen.slice(from)) results.push({ action: name, result: "skipped" });
  };

  for (let i = 0; i < input.chosen.length; i++) {
    const name = input.chosen[i];
    const action = byName.get(name);
    if (!action) {
      // checkChoice only lets known names through; this guards a machine fed by hand.
      results.push({ action: name, result: "threw" });
      skipRest(i + 1);
      return { kind: "threw", action: name, error: `no action named ${JSON.stringify(name)}`, workingMemory, internalMemory, results };
    }
    let value: unknown;
    try {
      value = await action.handleActionUse(workingMemory, internalMemory, recurse);
    } catch (error) {
      results.push({ action: name, result: "threw" });
      skipRest(i + 1);
      return { kind: "threw", action: name, error: describeError(error), workingMemory, internalMemory, results };
    }
    const outcome = classifyHandlerResult(value);
    switch (outcome.kind) {
      case "recurse":
        workingMemory = outcome.workingMemory;
        internalMemory = outcome.internalMemory ?? internalMemory;
        results.push({ action: name, result: "continued" });
        break;
      case "memory":
        results.push({ action: name, result: "ended" });
        skipRest(i + 1);
        return { kind: "done", workingMemory: outcome.workingMemory, internalMemory, results };
      case "transition":
        results.push({ action: name, result: "transitioned" });
        skipRest(i + 1);
        return { kind: "transition", next: outcome.next, workingMemory: outcome.workingMemory, internalMemory, results };
      case "invalid":
        results.push({ action: name, result: "threw" });
        skipRest(i + 1);
        return { kind: "threw", action: name, error: `${name} ${outcome.error}`, workingMemory, internalMemory, results };
    }
  }
  return { kind: "continue", workingMemory, internalMemory, results };
}
