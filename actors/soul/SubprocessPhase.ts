import { ProcessRun, TurnCancelledError } from "./ProcessRun.ts";
import type { SubprocessInput, SubprocessOutput } from "./soulMachineHost.ts";
import { TurnDraft } from "./TurnDraft.ts";
import { TurnTrace } from "./TurnTrace.ts";
import { parseResult } from "./processResult.ts";
import { TurnError } from "./TurnError.ts";
import type { CommittedTurn, TurnPlace, TurnServices } from "./TurnRunner.ts";

export interface SubprocessServices extends TurnServices {
  emitError(error: unknown, process: string, perceptionId: string, turnId?: string): void;
}

const CANCELLED = Symbol("cancelled");

/**
 * The subprocesses that run after a turn has committed: in order, each on a fork of the
 * phase's draft, so one that throws is logged and dropped while the others go on. Their
 * writes land together in a second commit, and only if no new perception cancelled them
 * first (one already waiting when the turn ends cancels them before they start): the
 * check and the commit happen in one synchronous step, so a cancellation either
 * comes before the commit (nothing lands) or after it (it is a no-op).
 */
export class SubprocessPhase {
  readonly #soul: SubprocessServices;
  #abort: AbortController | undefined;

  constructor(soul: SubprocessServices) {
    this.#soul = soul;
  }

  cancel(): void {
    this.#abort?.abort();
  }

  async run(input: SubprocessInput, signal: AbortSignal, last: CommittedTurn | undefined): Promise<SubprocessOutput> {
    const { blueprint } = this.#soul;
    const unchanged: SubprocessOutput = { next: input.next, params: input.params };
    // A perception that came in while the turn ran is as new to them as one that comes now.
    if (blueprint.subprocesses.length === 0 || signal.aborted || input.queued === true) return unchanged;
    const abort = new AbortController();
    this.#abort = abort;
    const cancelled = AbortSignal.any([abort.signal, signal]);
    const whenCancelled = new Promise<typeof CANCELLED>((resolve) =>
      cancelled.addEventListener("abort", () => resolve(CANCELLED), { once: true }),
    );
    try {
      const base = this.#soul.committed();
      const phase = new TurnDraft(() => this.#soul.committed(), `${last?.turnId ?? `${this.#soul.soulId}:${base.turn}`}:sub`, base.memory);
      if (this.#soul.tracing) phase.trace = new TurnTrace(base.memory.memories, input.perception, input.next, this.#soul.now());
      let next = input.next;
      let params = input.params;
      for (const sub of blueprint.subprocesses) {
        if (cancelled.aborted) return unchanged;
        const fork = phase.fork();
        phase.trace?.path.push(sub.name);
        const run = new ProcessRun(this.#soul.runHost, {
          kind: "subprocess",
          process: sub.name,
          perception: input.perception,
          draft: fork,
          invocationCount: fork.invocationCount(`subprocess:${sub.name}`),
          previousProcess: last?.previous,
          signal: cancelled,
        });
        try {
          const outcome = await Promise.race([
            (async () => {
              const result = await this.#soul.invoke(run, () => sub.process({ workingMemory: fork.memory, params: {} }));
              const parsed = parseResult(blueprint, `subprocess:${sub.name}`, result);
              if (parsed.executeNow) throw new TurnError(`subprocess '${sub.name}' used executeNow, which only processes may use`);
              await Promise.all(fork.streams);
              await parsed.memory.finished;
              return parsed;
            })(),
            whenCancelled,
          ]);
          if (outcome === CANCELLED) return unchanged;
          fork.memory = outcome.memory;
          let chosen = outcome.next === undefined ? undefined : { name: outcome.next, params: outcome.params };
          chosen ??= fork.nextProcess;
          fork.nextProcess = undefined;
          if (chosen && chosen.name !== next) {
            if (chosen.name !== input.next && !blueprint.allows(input.process, chosen.name)) {
              throw new TurnError(
                `subprocess '${sub.name}' chose '${chosen.name}', which '${input.process}' does not declare as a successor`,
              );
            }
            next = chosen.name;
            params = chosen.params;
          }
          fork.countInvocation(`subprocess:${sub.name}`);
          phase.merge(fork);
        } catch (error) {
          if (cancelled.aborted || error instanceof TurnCancelledError) return unchanged;
          this.#soul.emitError(error, sub.name, input.perception.id, phase.turnId);
        }
      }
      if (cancelled.aborted) return unchanged;
      if (!phase.hasWrites(base.memory) && next === input.next) return unchanged;
      const proposals = await this.#soul.review(phase, input.perception);
      if (cancelled.aborted) return unchanged;
      // From here on the writes land: a perception arriving now no longer cancels anything.
      this.#abort = undefined;
      const committed = this.#soul.committed();
      let previous = committed.previousProcess;
      if (next !== input.next) {
        if (next !== input.process) {
          previous = input.process;
          phase.resetProcess(next);
        } else previous = last?.previous;
      }
      const place: TurnPlace = {
        currentProcess: next,
        turn: committed.turn,
        nextParams: next === input.next ? committed.nextParams : params,
      };
      if (previous !== undefined) place.previousProcess = previous;
      const state = await this.#soul.commitDraft(phase, place, {}, proposals);
      if (next !== input.next) this.#soul.emitTransition(input.process, next, false, input.perception.id, phase.turnId);
      return { next, params: state.nextParams };
    } finally {
      if (this.#abort === abort) this.#abort = undefined;
    }
  }
}
