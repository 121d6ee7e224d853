/**
 * A mental process's return value, read: a WorkingMemory, `[memory, nextProcess]` or
 * `[memory, nextProcess, { executeNow, params }]`, with a clear error for anything else.
 *
 * It exists apart from the turn runner because both the main processes and the subprocesses
 * return the same shapes, and the checks (and their messages) are a contract of their own.
 */
import { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { ProcessParams, ProcessResult, TransitionOptions } from "../vocabulary/index.ts";
import { TurnError } from "./TurnError.ts";

export interface ParsedResult {
  memory: WorkingMemory;
  next: string | undefined;
  executeNow: boolean;
  params: ProcessParams | null;
}

/** Reads a process's return value in any of its three shapes, with a clear error for anything else. */
export function parseResult(blueprint: SoulBlueprint, process: string, result: ProcessResult): ParsedResult {
  if (result instanceof WorkingMemory) return { memory: result, next: undefined, executeNow: false, params: null };
  if (!Array.isArray(result) || !(result[0] instanceof WorkingMemory) || result.length < 2 || result.length > 3) {
    throw new TurnError(
      `process '${process}' returned ${describe(result)}; expected a WorkingMemory, [memory, nextProcess] or [memory, nextProcess, { executeNow, params }]`,
    );
  }
  const [memory, ref, options] = result as readonly [WorkingMemory, unknown, TransitionOptions | undefined];
  const next = typeof ref === "string" || typeof ref === "function" ? blueprint.nameOf(ref as string) : undefined;
  if (next === undefined) {
    const shown = typeof ref === "string" ? `'${ref}'` : typeof ref === "function" ? `function ${ref.name || "(anonymous)"}` : describe(ref);
    throw new TurnError(
      `process '${process}' returned ${shown}, which is not a process of soul '${blueprint.name}'; the soul stays where it was`,
    );
  }
  const { executeNow, params, ...rest } = options ?? {};
  const spread = Object.keys(rest).length ? (rest as ProcessParams) : null;
  return { memory, next, executeNow: executeNow === true, params: params ?? spread };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value === "object" ? `an object (${(value as object).constructor?.name ?? "Object"})` : typeof value;
}
