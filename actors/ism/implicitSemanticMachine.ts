import { createActor, type ActorRefFrom, type SnapshotFrom } from "xstate";
import { WorkingMemory } from "../../runtime/cognition/index.ts";
import { currentTurn } from "../vocabulary/index.ts";
import { describeError } from "./handlerResult.ts";
import { outputFromContext, safeLog, turnLogger, type IsmOptions } from "./ismContext.ts";
import { buildIsmInput } from "./ismInput.ts";
import { ismMachine, type IsmMachine } from "./ismMachine.ts";
import type { ProcessResult, TransitionOptions } from "../vocabulary/index.ts";
import type { IsmOutput } from "./types.ts";

/**
 * Runs an ISM to its end and returns everything it produced. Inside a soul turn the machine
 * is started through the turn's `spawnChild`, so it lives in the soul's actor system as its
 * child and the inspector shows it deliberating; outside a soul it is a standalone actor.
 * It never throws: every failure is an output with `outcome: "failed"` and the memory so far.
 */
export async function runIsm(options: IsmOptions): Promise<IsmOutput> {
  const turn = currentTurn();
  try {
    // The playbook region is read and replaced at start; a memory still streaming cannot be read.
    await options.workingMemory.finished;
  } catch (error) {
    return endedBeforeStart(options, "failed", `the working memory's stream failed: ${describeError(error)}`);
  }
  // A cancelled turn refuses new children; that is an interruption, not a failure.
  if (turn?.signal.aborted) return endedBeforeStart(options, "interrupted");
  const input = buildIsmInput(options, turn);
  let actor: ActorRefFrom<IsmMachine>;
  try {
    actor = turn ? turn.spawnChild(ismMachine, input) : createActor(ismMachine, { input });
  } catch (error) {
    return endedBeforeStart(options, "failed", `the ISM could not be started: ${describeError(error)}`);
  }
  // A cancelled turn stops the ISM at once, not only at the next perception check.
  const cancel = () => actor.send({ type: "ism.interrupt", reason: "the turn was cancelled" });
  turn?.signal.addEventListener("abort", cancel, { once: true });
  try {
    return await runToEnd(actor);
  } finally {
    turn?.signal.removeEventListener("abort", cancel);
  }
}

/**
 * Open Souls' `implicitSemanticMachine`: returns what a mental process returns, the memory or
 * `[memory, process, { executeNow, params }]`, so `return implicitSemanticMachine({...})` can
 * end a process. Interrupted, exhausted and failed runs return the memory built so far; the
 * reason is in the turn's log (use `runIsm` to get it as data).
 */
export async function implicitSemanticMachine(options: IsmOptions): Promise<ProcessResult> {
  return toProcessReturn(await runIsm(options));
}

export function toProcessReturn(output: IsmOutput): ProcessResult {
  if (output.outcome !== "transition" || !output.next) return output.workingMemory;
  const { process, executeNow, params } = output.next;
  const opts: TransitionOptions = {};
  if (executeNow !== undefined) opts.executeNow = executeNow;
  if (params !== undefined) opts.params = params;
  return [output.workingMemory, process, opts];
}

/**
 * Waits for the actor's end and starts it if `spawnChild` left that to us (XState's own
 * `spawnChild` starts actors; a plain `createActor(logic, { parent })` does not). `start()`
 * is a no-op on a running actor. Subscribing to an actor that already ended reports its end
 * at once, which is how an ISM that finished inside `spawnChild` is caught.
 */
function runToEnd(actor: ActorRefFrom<IsmMachine>): Promise<IsmOutput> {
  return new Promise<IsmOutput>((resolve) => {
    let ended = false;
    const end = (error?: unknown) => {
      if (ended) return;
      ended = true;
      resolve(outputOf(actor.getSnapshot(), error));
    };
    if (actor.getSnapshot().status === "stopped") {
      end();
      return;
    }
    actor.subscribe({ complete: () => end(), error: (error: unknown) => end(error ?? "unknown error") });
    if (!ended) {
      try {
        actor.start();
      } catch (error) {
        end(error);
      }
    }
  });
}

function outputOf(snapshot: SnapshotFrom<IsmMachine>, error?: unknown): IsmOutput {
  if (snapshot.status === "done" && snapshot.output) return snapshot.output;
  const context = snapshot.context;
  if (snapshot.status === "error" || error !== undefined) {
    const reason = `ISM machine error: ${describeError(snapshot.status === "error" ? snapshot.error : error)}`;
    safeLog(context.log, reason);
    return outputFromContext({ ...context, outcome: "failed", error: reason });
  }
  // Stopped from outside (the soul stopping, the turn torn down) before it could finish.
  return outputFromContext({ ...context, outcome: "interrupted" });
}

/** An end before the machine has a context: the memory is returned as it came. */
function endedBeforeStart(options: IsmOptions, outcome: "failed" | "interrupted", error?: string): IsmOutput {
  safeLog(options.log ?? turnLogger(currentTurn()), `ISM ended before it started: ${error ?? outcome}`);
  const output: IsmOutput = {
    outcome,
    workingMemory: options.workingMemory,
    internalMemory: options.internalMemory ?? new WorkingMemory({ soulName: options.workingMemory?.soulName ?? "soul" }),
    decisions: [],
    loops: 0,
  };
  if (error !== undefined) output.error = error;
  return output;
}
