import { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { TurnCommit } from "../../runtime/store/index.ts";
import { DAIMONIC_WHISPER_KEY, readDaimonicWhisper, withDaimonicIntuition, withoutDaimonicIntuition } from "../../runtime/cognition/index.ts";
import { isIsmProcess, ISM_PROCESS, type IsmProcessMarker } from "../ism/index.ts";
import type { IsmMachineInput } from "../ism/index.ts";
import type { IsmOutput } from "../ism/index.ts";
import type { DeclaredProcess, SoulBlueprint } from "./defineSoul.ts";
import type { ProcessParams, ProcessResult } from "../vocabulary/index.ts";
import type { Perception } from "../vocabulary/index.ts";
import { ProcessRun, type RunHost } from "./ProcessRun.ts";
import type { Proposal } from "../vocabulary/index.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import { MAX_EXECUTE_NOW } from "./soulMachine.ts";
import type { IsmFinishInput, IsmPrepared, RunInput, RunOutput } from "./soulMachineHost.ts";
import type { SoulState } from "./SoulState.ts";
import { TurnDraft } from "./TurnDraft.ts";
import { TurnTrace } from "./TurnTrace.ts";
import { TurnError } from "./TurnError.ts";
import { parseResult } from "./processResult.ts";

/** What the turn runner needs from its soul; implemented by SoulRuntime. */
export interface TurnServices {
  readonly soulId: string;
  readonly blueprint: SoulBlueprint;
  readonly runHost: RunHost;
  /** Turns are traced for the turn log (the soul's store keeps one). */
  readonly tracing: boolean;
  /** The committed state (replaced, never mutated, by each commit). */
  committed(): SoulState;
  invoke<T>(run: ProcessRun, fn: () => T): T;
  review(draft: TurnDraft, perception: Perception): Promise<Proposal[]>;
  /** Commits in order with every other write of this soul, then does the post-commit work. */
  commitDraft(draft: TurnDraft, place: TurnPlace, extra: Pick<TurnCommit, "inboxDone">, proposals: Proposal[]): Promise<SoulState>;
  failPerception(perception: Perception, process: string, error: unknown, turnId?: string): Promise<void>;
  emitTransition(from: string, to: string, executeNow: boolean, perceptionId: string, turnId: string): void;
  emitTurn(turn: number, process: string, perceptionId: string, startedAt: number, turnId: string): void;
  emit(event: SoulEvent): void;
  /** The soul has been told to stop: a running ISM ends at its next loop. */
  stopRequested(): boolean;
  now(): number;
}

/** Where a commit leaves the soul. */
export interface TurnPlace {
  currentProcess: string;
  previousProcess?: string;
  turn: number;
  nextParams: ProcessParams | null;
}

/** An ISM process between its phases: prepared, deliberating (the soul machine runs it), finished. */
interface IsmRun {
  process: string;
  declared: DeclaredProcess;
  previous: string | undefined;
  run: ProcessRun;
  marker: IsmProcessMarker;
  input: IsmMachineInput;
  /** The memory the ISM starts from: what is left if the machine itself fails. */
  memory: WorkingMemory;
  /** Spans the phases; the run's hooks and steps see its signal. */
  controller: AbortController;
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
  /** Set from `prepareIsm` until `finishIsm`. */
  ism?: IsmRun;
  /** The ISM runs of this turn, aborted when it ends: a handler an interrupted ISM left behind stops its steps. */
  ismRuns?: AbortController[];
  /** A daimonic whisper was recalled into this turn's memory: taken out again before the commit. */
  recalled?: boolean;
}

/** The last committed turn: the subprocess phase builds on it. */
export interface CommittedTurn {
  turnId: string;
  process: string;
  previous: string | undefined;
}

/**
 * Runs the mental processes of a turn and commits it: the work behind the machine's
 * `running` states. A turn's writes stay in its draft until the whole executeNow chain has
 * finished; a throw anywhere leaves the committed state as it was.
 *
 * An ordinary process is one call, `run`. An ISM process is three, one per phase of its
 * `running` state: `prepareIsm` (integrate the perception, build the ISM's input in the
 * turn's scope), then the soul machine runs the ISM machine itself as the state's invoked
 * child, then `finishIsm` (the ISM's output read as a process return, then the same
 * transition checks, executeNow and commit as any process). The turn stays open across the
 * phases and nothing is committed before `finishIsm`.
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
    const turn = this.#turnFor(input);
    try {
      const { declared, previous, run } = this.#open(turn, input, signal);
      // One scope for the integrator and the process: it starts as the integrator's (its own
      // hook slots) and becomes the process's before the process runs.
      const result = await this.#soul.invoke(run, async () => {
        await this.#integrate(turn, input, run);
        return declared.process({ workingMemory: turn.draft.memory, params: input.params ?? {} });
      });
      return await this.#settle(turn, this.#conclude(turn, input, declared, previous, result));
    } catch (error) {
      await this.#fail(turn, input, error);
      throw error;
    }
  }

  /** The first phase of an ISM process: the memory it starts from and the machine's input. */
  async prepareIsm(input: RunInput, signal: AbortSignal): Promise<IsmPrepared> {
    const turn = this.#turnFor(input);
    try {
      // The run outlives this phase (the ISM's handlers use it), so it gets its own signal,
      // which the phases' signals abort.
      const controller = new AbortController();
      follow(controller, signal);
      const { declared, previous, run } = this.#open(turn, input, controller.signal);
      const marker = isIsmProcess(declared.process) ? declared.process[ISM_PROCESS] : undefined;
      if (!marker) throw new TurnError(`process '${input.process}' is not an ISM process`);
      const ismInput = await this.#soul.invoke(run, async () => {
        await this.#integrate(turn, input, run);
        // The ISM reads and replaces its playbook region when it starts: the memory must be settled.
        if (turn.draft.memory.isPending) await turn.draft.memory.finished;
        // Built here, inside the turn, so it carries the turn scope and cognition context.
        return marker.input(turn.draft.memory);
      });
      // Stopping the soul ends the deliberation at its next loop, as a new perception does.
      const pending = ismInput.interrupted ?? (() => false);
      ismInput.interrupted = () => pending() || this.#soul.stopRequested();
      turn.ism = { process: input.process, declared, previous, run, marker, input: ismInput, memory: turn.draft.memory, controller };
      (turn.ismRuns ??= []).push(controller);
      return { process: input.process, memories: turn.draft.memory.length };
    } catch (error) {
      await this.#fail(turn, input, error);
      throw error;
    }
  }

  /** The prepared input of the ISM about to run. */
  ismInput(process: string): IsmMachineInput {
    const ism = this.#turn?.ism;
    if (ism && ism.process === process) return ism.input;
    // Unreachable through the machine (only `preparing` leads to the ISM). An input the ISM
    // rejects ends it as `failed` without running anything; `finishIsm` then fails the turn.
    return { workingMemory: new WorkingMemory({ soulName: this.#soul.blueprint.name }), goal: "", playbook: "", actions: [] };
  }

  /** The last phase of an ISM process: its output read as a process return, then the usual end of a step. */
  async finishIsm(input: IsmFinishInput, signal: AbortSignal): Promise<RunOutput> {
    const turn = this.#turn;
    const ism = turn?.ism;
    if (!turn || !ism || ism.process !== input.process) {
      const error = new TurnError(`process '${input.process}' has no prepared ISM to finish; the soul stays in '${input.current}'`);
      if (turn) await this.#fail(turn, input, error);
      else await this.#soul.failPerception(input.perception, input.process, error);
      throw error;
    }
    turn.ism = undefined;
    ism.run.seal();
    follow(ism.controller, signal);
    try {
      const output = input.result.output ?? crashedOutput(ism.memory, input.result.error);
      if (output.outcome === "failed") {
        // Never a failed turn: the deliberation so far is the soul's, and it keeps it.
        this.#soul.emit({
          type: "log",
          soulId: this.#soul.soulId,
          process: input.process,
          message: `ISM process '${input.process}' failed (${output.error ?? "no reason given"}); the turn ends with the memory so far`,
          data: { ism: "failed", error: output.error, loops: output.loops, perceptionId: turn.perception.id },
        });
      }
      const result = ism.marker.toProcessReturn(output);
      return await this.#settle(turn, this.#conclude(turn, input, ism.declared, ism.previous, result));
    } catch (error) {
      await this.#fail(turn, input, error);
      throw error;
    }
  }

  #turnFor(input: RunInput): ActiveTurn {
    return input.chain === 0 || !this.#turn ? this.#begin(input) : this.#turn;
  }

  #begin(input: RunInput): ActiveTurn {
    const committed = this.#soul.committed();
    const turnId = `${this.#soul.soulId}:${committed.turn + 1}`;
    const draft = new TurnDraft(() => this.#soul.committed(), turnId, committed.memory);
    if (this.#soul.tracing) draft.trace = new TurnTrace(committed.memory.memories, input.perception, input.current, this.#soul.now());
    const turn: ActiveTurn = {
      draft,
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

  async #fail(turn: ActiveTurn, input: RunInput, error: unknown): Promise<void> {
    if (this.#turn === turn) this.#turn = undefined;
    turn.ism = undefined;
    endIsmRuns(turn);
    await this.#soul.failPerception(turn.perception, input.process, error, turn.draft.turnId);
  }

  /** Enters the process: who came before it, and the run its hooks will find. */
  #open(turn: ActiveTurn, input: RunInput, signal: AbortSignal): { declared: DeclaredProcess; previous: string | undefined; run: ProcessRun } {
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

    draft.trace?.path.push(name);
    const run = new ProcessRun(this.#soul.runHost, {
      process: name,
      perception,
      draft,
      previousProcess: previous,
      signal,
      kind: input.chain === 0 ? "integrator" : "process",
      invocationCount: draft.invocationCount(name),
    });
    return { declared, previous, run };
  }

  /** The first process of a turn takes the perception into memory first. Call inside the run's scope. */
  async #integrate(turn: ActiveTurn, input: RunInput, run: ProcessRun): Promise<void> {
    if (input.chain !== 0) return;
    const { blueprint } = this.#soul;
    turn.draft.memory = await blueprint.memoryIntegrator({
      perception: turn.perception,
      workingMemory: turn.draft.memory,
      soul: { name: blueprint.name, persona: blueprint.persona },
      currentProcess: input.process,
    });
    this.#recall(turn);
    run.beginProcess();
  }

  /**
   * Daimonic intuition (DESIGN step 7, cognitive pipeline 3b): a whisper pending in soul
   * memory enters the memory of a turn that answers an external perception as the soul's own
   * recall (assistant role, `daimonicIntuition` region), after the integrator and before the
   * process, so its steps (and those of its executeNow chain) see it. The commit takes the
   * recall out of the working memory again and consumes the whisper in the same write, if it
   * is still the one recalled here. A turn that fails keeps it for the next one.
   *
   * Scheduled and other internal perceptions (`internal: true`) neither see nor consume it:
   * the intuition is about the conversation, and a timer firing must not use it up unheard.
   * Subprocesses run after the commit, so the whisper is already consumed for them.
   */
  #recall(turn: ActiveTurn): void {
    if (turn.perception.internal === true) return;
    const { draft } = turn;
    // The integrator handled the key itself (it assigned it): leave it to the blueprint.
    if (draft.assignedSoulMemory(DAIMONIC_WHISPER_KEY)) return;
    const stored = this.#soul.committed().soulMemory[DAIMONIC_WHISPER_KEY];
    if (stored === undefined || stored === null) return;
    const whisper = readDaimonicWhisper({ [DAIMONIC_WHISPER_KEY]: stored });
    if (!whisper) return;
    draft.memory = withDaimonicIntuition(draft.memory, whisper);
    draft.trace?.whispers.push({ source: whisper.source, content: whisper.content });
    // The stored object is the whisper's identity: `whisper()` stores a new one each time and
    // nothing copies it in place, so one that arrives during the turn is a different value.
    draft.consumeSoulMemory(DAIMONIC_WHISPER_KEY, stored);
    turn.recalled = true;
  }

  /** Reads what the process returned and decides where the soul goes: the end of every step. */
  #conclude(turn: ActiveTurn, input: RunInput, declared: DeclaredProcess, previous: string | undefined, result: ProcessResult): RunOutput {
    const { blueprint } = this.#soul;
    const { draft } = turn;
    const name = input.process;
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

  /** An executeNow hand-over keeps the turn open; anything else commits it. */
  async #settle(turn: ActiveTurn, out: RunOutput): Promise<RunOutput> {
    if (out.executeNow) {
      this.#soul.emitTransition(out.process, out.next, true, turn.perception.id, turn.draft.turnId);
      return out;
    }
    await this.#finish(turn, out);
    return out;
  }

  async #finish(turn: ActiveTurn, out: RunOutput): Promise<void> {
    const { draft, perception } = turn;
    // Each await costs a promise on every turn; the common turn has nothing to wait for.
    if (draft.streams.length) await Promise.all(draft.streams);
    if (draft.memory.isPending) await draft.memory.finished;
    // The recall was for this turn's steps only: it does not stay in the conversation.
    if (turn.recalled) draft.memory = withoutDaimonicIntuition(draft.memory);
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
    // Only now: speech an ISM handler streamed had to reach the commit first.
    endIsmRuns(turn);
    this.lastCommitted = { turnId: draft.turnId, process: turn.lastProcess, previous: turn.lastPrevious };
    if (out.next !== turn.origin || turn.lastProcess !== turn.origin) {
      this.#soul.emitTransition(turn.lastProcess, out.next, false, perception.id, draft.turnId);
    }
    this.#soul.emitTurn(state.turn, turn.lastProcess, perception.id, turn.startedAt, draft.turnId);
  }
}

function endIsmRuns(turn: ActiveTurn): void {
  if (!turn.ismRuns) return;
  for (const controller of turn.ismRuns) controller.abort();
  turn.ismRuns = undefined;
}

/** A phase's signal aborts the run that spans the phases (the soul actor stopped under it). */
function follow(controller: AbortController, signal: AbortSignal): void {
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
}

/** The ISM machine itself failed (it is built not to): the memory it started from is what is left. */
function crashedOutput(memory: WorkingMemory, error: string | undefined): IsmOutput {
  return {
    outcome: "failed",
    workingMemory: memory,
    internalMemory: new WorkingMemory({ soulName: memory.soulName }),
    decisions: [],
    loops: 0,
    error: `the ISM machine failed: ${error ?? "unknown error"}`,
  };
}
