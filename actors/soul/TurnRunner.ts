import { WorkingMemory } from "../../runtime/cognition/WorkingMemory.ts";
import type { TurnCommit } from "../../runtime/store/types.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { ProcessParams, ProcessResult, TransitionOptions } from "./MentalProcess.ts";
import type { Perception } from "./Perception.ts";
import { ProcessRun, type RunHost } from "./ProcessRun.ts";
import type { Proposal } from "./Proposal.ts";
import { MAX_EXECUTE_NOW, type RunInput, type RunOutput } from "./soulMachine.ts";
import type { SoulState } from "./SoulState.ts";
import { TurnDraft } from "./TurnDraft.ts";

/** What the turn runner needs from its soul; implemented by SoulRuntime. */
export interface TurnServices {
  readonly soulId: string;
  readonly blueprint: SoulBlueprint;
  readonly runHost: RunHost;
  /** The committed state (replaced, never mutated, by each commit). */
  committed(): SoulState;
  invoke<T>(run: ProcessRun, fn: () => T): T;
  review(draft: TurnDraft, perception: Perception): Promise<Proposal[]>;
  /** Commits in order with every other write of this soul, then does the post-commit work. */
  commitDraft(draft: TurnDraft, place: TurnPlace, extra: Pick<TurnCommit, "inboxDone">, proposals: Proposal[]): Promise<SoulState>;
  failPerception(perception: Perception, process: string, error: unknown): Promise<void>;
  emitTransition(from: string, to: string, executeNow: boolean, perceptionId: string): void;
  emitTurn(turn: number, process: string, perceptionId: string, startedAt: number): void;
  now(): number;
}

/** Where a commit leaves the soul. */
export interface TurnPlace {
  currentProcess: string;
  previousProcess?: string;
  turn: number;
  nextParams: ProcessParams | null;
}

/** The turn in progress: a main process and its executeNow chain. */
interface ActiveTurn {
  draft: TurnDraft;
  perception: Perception;
  /** Where the turn started: the soul's current process. */
  origin: string;
  /** A scheduled perception routed to another process: the soul returns to `origin` after. */
  routed: boolean;
  startedAt: number;
  lastProcess: string;
  lastPrevious: string | undefined;
  returnsToOrigin: boolean;
}

/** The last committed turn: the subprocess phase builds on it. */
export interface CommittedTurn {
  turnId: string;
  process: string;
  previous: string | undefined;
}

export class TurnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TurnError";
  }
}

/**
 * Runs the mental processes of a turn and commits it: the work behind the machine's
 * `running` states. A turn's writes stay in its draft until the whole executeNow chain has
 * finished; a throw anywhere leaves the committed state as it was.
 */
export class TurnRunner {
  readonly #soul: TurnServices;
  #turn: ActiveTurn | undefined;
  lastCommitted: CommittedTurn | undefined;

  constructor(soul: TurnServices) {
    this.#soul = soul;
  }

  get running(): boolean {
    return this.#turn !== undefined;
  }

  async run(input: RunInput, signal: AbortSignal): Promise<RunOutput> {
    const turn = input.chain === 0 || !this.#turn ? this.#begin(input) : this.#turn;
    try {
      const out = await this.#step(turn, input, signal);
      if (out.executeNow) {
        this.#soul.emitTransition(out.process, out.next, true, turn.perception.id);
        return out;
      }
      await this.#finish(turn, out);
      return out;
    } catch (error) {
      this.#turn = undefined;
      await this.#soul.failPerception(turn.perception, input.process, error);
      throw error;
    }
  }

  #begin(input: RunInput): ActiveTurn {
    const committed = this.#soul.committed();
    const turnId = `${this.#soul.soulId}:${committed.turn + 1}`;
    const turn: ActiveTurn = {
      draft: new TurnDraft(() => this.#soul.committed(), turnId, committed.memory),
      perception: input.perception,
      origin: input.current,
      routed: input.process !== input.current,
      startedAt: this.#soul.now(),
      lastProcess: input.current,
      lastPrevious: committed.previousProcess,
      returnsToOrigin: false,
    };
    this.#turn = turn;
    return turn;
  }

  async #step(turn: ActiveTurn, input: RunInput, signal: AbortSignal): Promise<RunOutput> {
    const { blueprint } = this.#soul;
    const { draft, perception } = turn;
    const name = input.process;
    const declared = blueprint.processes.get(name);
    if (!declared) throw new TurnError(`soul '${blueprint.name}' has no process '${name}'`);

    let previous: string | undefined;
    if (input.chain === 0) previous = turn.routed ? turn.origin : this.#soul.committed().previousProcess;
    else if (turn.lastProcess !== name) {
      previous = turn.lastProcess;
      draft.resetProcess(name);
    } else previous = turn.lastPrevious;

    // One scope for the integrator and the process: it starts as the integrator's (its own
    // hook slots) and becomes the process's before the process runs.
    const run = new ProcessRun(this.#soul.runHost, {
      process: name,
      perception,
      draft,
      previousProcess: previous,
      signal,
      kind: input.chain === 0 ? "integrator" : "process",
      invocationCount: draft.invocationCount(name),
    });
    const result = await this.#soul.invoke(run, async () => {
      if (input.chain === 0) {
        draft.memory = await blueprint.memoryIntegrator({
          perception,
          workingMemory: draft.memory,
          soul: { name: blueprint.name, persona: blueprint.persona },
          currentProcess: name,
        });
        run.beginProcess();
      }
      return declared.process({ workingMemory: draft.memory, params: input.params ?? {} });
    });
    const parsed = parseResult(blueprint, name, result);
    draft.memory = parsed.memory;
    draft.countInvocation(name);
    turn.lastProcess = name;
    turn.lastPrevious = previous;

    let next = parsed.next;
    let params = parsed.params;
    if (next === undefined && draft.nextProcess) {
      ({ name: next, params } = draft.nextProcess);
      draft.nextProcess = undefined;
    }
    if (next !== undefined && !blueprint.allows(name, next)) {
      const declaredNext = declared.next.length ? declared.next.join(", ") : "none";
      throw new TurnError(
        `process '${name}' handed over to '${next}', which it does not declare as a successor (declared: ${declaredNext}); the soul stays in '${turn.origin}'`,
      );
    }
    if (parsed.executeNow) {
      if (next === undefined) throw new TurnError(`process '${name}' asked for executeNow without naming a process`);
      if (input.chain >= MAX_EXECUTE_NOW) {
        throw new TurnError(
          `executeNow chained more than ${MAX_EXECUTE_NOW} times in one turn (last: '${name}' -> '${next}'); the turn is abandoned and the soul stays in '${turn.origin}'`,
        );
      }
      return { process: name, next, executeNow: true, params };
    }
    // A routed turn is a visit: unless the process moves on to another one, the soul goes back.
    turn.returnsToOrigin = turn.routed && (next === undefined || next === name);
    if (turn.returnsToOrigin) return { process: name, next: turn.origin, executeNow: false, params: this.#soul.committed().nextParams };
    return { process: name, next: next ?? name, executeNow: false, params: next === undefined ? null : params };
  }

  async #finish(turn: ActiveTurn, out: RunOutput): Promise<void> {
    const { draft, perception } = turn;
    // Each await costs a promise on every turn; the common turn has nothing to wait for.
    if (draft.streams.length) await Promise.all(draft.streams);
    if (draft.memory.isPending) await draft.memory.finished;
    const proposals = draft.actions.length ? await this.#soul.review(draft, perception) : [];
    const base = this.#soul.committed();
    let previous: string | undefined;
    if (turn.returnsToOrigin) previous = base.previousProcess;
    else if (out.next !== turn.lastProcess) {
      previous = turn.lastProcess;
      draft.resetProcess(out.next);
    } else previous = turn.lastPrevious;
    const place: TurnPlace = { currentProcess: out.next, turn: base.turn + 1, nextParams: out.params };
    if (previous !== undefined) place.previousProcess = previous;
    const state = await this.#soul.commitDraft(draft, place, { inboxDone: perception.id }, proposals);
    this.#turn = undefined;
    this.lastCommitted = { turnId: draft.turnId, process: turn.lastProcess, previous: turn.lastPrevious };
    if (out.next !== turn.origin || turn.lastProcess !== turn.origin) {
      this.#soul.emitTransition(turn.lastProcess, out.next, false, perception.id);
    }
    this.#soul.emitTurn(state.turn, turn.lastProcess, perception.id, turn.startedAt);
  }
}

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
