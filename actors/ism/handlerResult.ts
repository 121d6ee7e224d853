import { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { ProcessRef } from "../vocabulary/index.ts";
import { ISM_RECURSE, type IsmNext, type Recurse, type RecurseSignal } from "./types.ts";

/**
 * `recurse` does not run the next loop itself (as a naive recursive implementation would):
 * it returns a marker, and the machine goes round from `acting` back to `checkPerceptions`.
 * That keeps every loop a visible machine transition, and keeps the perception check and
 * the loop bound in one place.
 */
export const recurse: Recurse = ({ workingMemory, internalMemory }) => {
  const signal: RecurseSignal = internalMemory
    ? { [ISM_RECURSE]: true, workingMemory, internalMemory }
    : { [ISM_RECURSE]: true, workingMemory };
  return Object.freeze(signal);
};

export function isRecurseSignal(value: unknown): value is RecurseSignal {
  return typeof value === "object" && value !== null && (value as Partial<RecurseSignal>)[ISM_RECURSE] === true;
}

/** A handler's return value, sorted into what the machine does with it. */
export type ClassifiedResult =
  | { kind: "recurse"; workingMemory: WorkingMemory; internalMemory?: WorkingMemory }
  | { kind: "memory"; workingMemory: WorkingMemory }
  | { kind: "transition"; workingMemory: WorkingMemory; next: IsmNext }
  | { kind: "invalid"; error: string };

/**
 * Handlers are blueprint code, typed but not trusted: JavaScript blueprints, or a handler that
 * forgets its `return`, give anything. Whatever it is must become a clear outcome, not a crash
 * deep inside the machine.
 */
export function classifyHandlerResult(value: unknown): ClassifiedResult {
  if (isRecurseSignal(value)) {
    if (!(value.workingMemory instanceof WorkingMemory)) {
      return { kind: "invalid", error: "recurse() was called without a workingMemory" };
    }
    return value.internalMemory instanceof WorkingMemory
      ? { kind: "recurse", workingMemory: value.workingMemory, internalMemory: value.internalMemory }
      : { kind: "recurse", workingMemory: value.workingMemory };
  }
  if (value instanceof WorkingMemory) return { kind: "memory", workingMemory: value };
  if (Array.isArray(value) && value[0] instanceof WorkingMemory && isProcessRef(value[1])) {
    return { kind: "transition", workingMemory: value[0], next: toNext(value[1], value[2]) };
  }
  return {
    kind: "invalid",
    error: `returned ${describeValue(value)}; expected recurse({ workingMemory }), a WorkingMemory, or [memory, process, { executeNow, params }]`,
  };
}

/**
 * Open Souls spreads params into the options (`{ ...params, executeNow }`); ensoul also takes
 * them under `params`. Both end up in `params`, as the soul reads them, with `params` winning
 * a clash because it is the explicit form.
 */
function toNext(process: ProcessRef, options: unknown): IsmNext {
  const next: IsmNext = { process };
  if (typeof options !== "object" || options === null) return next;
  const { executeNow, params, ...spread } = options as Record<string, unknown>;
  if (executeNow !== undefined) next.executeNow = executeNow === true;
  const explicit = typeof params === "object" && params !== null ? (params as Record<string, unknown>) : {};
  const merged = { ...spread, ...explicit };
  if (Object.keys(merged).length) next.params = merged;
  return next;
}

function isProcessRef(value: unknown): value is ProcessRef {
  return (typeof value === "string" && value.length > 0) || typeof value === "function";
}

function describeValue(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Error text for logs and the decision log; a non-Error throw is still described. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
