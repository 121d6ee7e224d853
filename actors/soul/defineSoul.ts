import { parseModelName } from "../../runtime/providers/index.ts";
import { defaultMemoryIntegrator } from "./memoryIntegrator.ts";
import type { MemoryIntegrator, MentalProcess, ProcessRef } from "../vocabulary/index.ts";

/** A process and the processes it may hand over to (itself is always allowed). */
export interface ProcessDeclaration {
  process: MentalProcess;
  next?: readonly string[];
}

/** Per-step model names (`provider:model`); `default` is used by steps with no entry. */
export interface SoulModels {
  default?: string;
  [step: string]: string | undefined;
}

export interface SoulDefinition {
  name: string;
  /** The soul.md text: who the soul is. The default integrator makes it the `core` region. */
  persona: string;
  initialProcess: string | MentalProcess;
  /** Every process by name; a bare function is a process with no successors but itself. */
  processes: Record<string, ProcessDeclaration | MentalProcess>;
  /** Run in order after each turn's main process; an array names them by function name. */
  subprocesses?: Record<string, MentalProcess> | readonly MentalProcess[];
  models?: SoulModels;
  memoryIntegrator?: MemoryIntegrator;
  /** The soul's `rag/` folder, for `useBlueprintStore()` (a soul loaded from a folder gets its own). */
  rag?: string;
}

export interface DeclaredProcess {
  readonly name: string;
  readonly process: MentalProcess;
  /** Declared successors, without the process itself. */
  readonly next: readonly string[];
}

export interface DeclaredSubprocess {
  readonly name: string;
  readonly process: MentalProcess;
}

/** A validated soul definition: what the soul machine is compiled from. */
export interface SoulBlueprint {
  readonly name: string;
  readonly persona: string;
  readonly initialProcess: string;
  readonly processes: ReadonlyMap<string, DeclaredProcess>;
  readonly subprocesses: readonly DeclaredSubprocess[];
  readonly models: Readonly<SoulModels>;
  readonly memoryIntegrator: MemoryIntegrator;
  /** The folder `useBlueprintStore()` indexes, when the soul has one. */
  readonly ragDir?: string;
  /** The declared name of a process function or name, or undefined when it is not declared. */
  nameOf(ref: ProcessRef): string | undefined;
  /** True when `from` may hand over to `to` (a process may always stay in itself). */
  allows(from: string, to: string): boolean;
}

export class SoulBlueprintError extends Error {
  constructor(soul: string, message: string) {
    super(`soul blueprint '${soul}': ${message}`);
    this.name = "SoulBlueprintError";
  }
}

/** Process names become XState state keys, so they must not contain `.` or `#`. */
const PROCESS_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Validates a soul definition and indexes it. Every mistake a blueprint can make in its
 * process graph is reported here, when the soul is defined, not at the first perception.
 */
export function defineSoul(definition: SoulDefinition): SoulBlueprint {
  const soul = definition.name;
  const fail = (message: string): never => {
    throw new SoulBlueprintError(soul || "(unnamed)", message);
  };
  if (typeof soul !== "string" || soul.trim() === "") fail("name must be a non-empty string");
  if (typeof definition.persona !== "string") fail("persona must be a string (the soul.md text)");

  const processes = new Map<string, DeclaredProcess>();
  const byFunction = new Map<MentalProcess, string>();
  for (const [name, entry] of Object.entries(definition.processes ?? {})) {
    if (!PROCESS_NAME.test(name)) fail(`process name '${name}' must match ${PROCESS_NAME}`);
    const declaration: ProcessDeclaration = typeof entry === "function" ? { process: entry } : entry;
    if (typeof declaration?.process !== "function") fail(`process '${name}' has no process function`);
    const other = byFunction.get(declaration.process);
    if (other !== undefined) {
      fail(`processes '${other}' and '${name}' are the same function; a returned function would be ambiguous`);
    }
    byFunction.set(declaration.process, name);
    const next = [...(declaration.next ?? [])];
    const seen = new Set<string>();
    for (const successor of next) {
      if (seen.has(successor)) fail(`process '${name}' lists successor '${successor}' twice`);
      seen.add(successor);
    }
    processes.set(name, { name, process: declaration.process, next: next.filter((n) => n !== name) });
  }
  if (processes.size === 0) fail("declares no processes");
  for (const declared of processes.values()) {
    for (const successor of declared.next) {
      if (!processes.has(successor)) {
        fail(`process '${declared.name}' names unknown successor '${successor}' (declared: ${[...processes.keys()].join(", ")})`);
      }
    }
  }

  const nameOf = (ref: ProcessRef): string | undefined =>
    typeof ref === "string" ? (processes.has(ref) ? ref : undefined) : byFunction.get(ref);

  const initialProcess = nameOf(definition.initialProcess);
  if (initialProcess === undefined) {
    const shown = typeof definition.initialProcess === "string" ? `'${definition.initialProcess}'` : "function";
    fail(`initialProcess ${shown} is not one of the declared processes`);
  }

  const subprocesses = declareSubprocesses(definition.subprocesses, fail);
  for (const sub of subprocesses) {
    if (processes.has(sub.name)) fail(`subprocess '${sub.name}' has the name of a process`);
  }

  const models: SoulModels = { ...(definition.models ?? {}) };
  for (const [step, model] of Object.entries(models)) {
    if (model === undefined) continue;
    try {
      parseModelName(model);
    } catch (err) {
      fail(`models.${step}: ${(err as Error).message}`);
    }
  }

  return Object.freeze({
    name: soul,
    persona: definition.persona,
    initialProcess: initialProcess as string,
    processes,
    subprocesses,
    models: Object.freeze(models),
    memoryIntegrator: definition.memoryIntegrator ?? defaultMemoryIntegrator,
    ...(definition.rag !== undefined ? { ragDir: definition.rag } : {}),
    nameOf,
    allows: (from: string, to: string) => from === to || (processes.get(from)?.next.includes(to) ?? false),
  });
}

function declareSubprocesses(
  subprocesses: SoulDefinition["subprocesses"],
  fail: (message: string) => never,
): DeclaredSubprocess[] {
  if (!subprocesses) return [];
  const entries: [string, MentalProcess][] = Array.isArray(subprocesses)
    ? (subprocesses as readonly MentalProcess[]).map((fn, i) => {
        if (typeof fn !== "function") fail(`subprocess #${i} is not a function`);
        if (!fn.name) fail(`subprocess #${i} is an anonymous function; name it or pass subprocesses as an object`);
        return [fn.name, fn];
      })
    : Object.entries(subprocesses as Record<string, MentalProcess>);
  const seen = new Set<string>();
  return entries.map(([name, process]) => {
    if (typeof process !== "function") fail(`subprocess '${name}' is not a function`);
    if (seen.has(name)) fail(`subprocess '${name}' is declared twice`);
    seen.add(name);
    return Object.freeze({ name, process });
  });
}
