import { assign, fromPromise, setup, type DoneActorEvent, type ErrorActorEvent } from "xstate";
import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import { chooseNextActions, type ChoicePrompt, type ChoiceResult } from "./chooseAction.ts";
import { formatDecision, mirrorDecisions } from "./decisionLog.ts";
import { describeError } from "./handlerResult.ts";
import {
  initialContext,
  MAX_CHOICE_RETRIES,
  outputFromContext,
  safeLog,
  type IsmContext,
  type IsmMachineInput,
} from "./ismContext.ts";
import { inScope, type IsmScope } from "./ismScope.ts";
import { withPlaybook } from "./playbookRegion.ts";
import { runChosenActions, type ActingInput, type ActingResult } from "./runActions.ts";
import type { DecisionLogEntry, IsmOutcome, IsmOutput } from "./types.ts";

/**
 * The Implicit Semantic Machine as an XState machine:
 *
 *   checkPerceptions ──(perception pending)──▶ interrupted
 *         │          ──(maxLoops reached)───▶ exhausted
 *         ▼
 *     selecting ──(DONE)──▶ done
 *         │     ──(unknown action, first time)──▶ selecting (asked again)
 *         │     ──(no usable choice)──▶ failed
 *         ▼
 *      acting ──(every handler recursed)──▶ checkPerceptions
 *               ──(a handler returned memory)──▶ done
 *               ──(a handler returned [memory, process, opts])──▶ transition
 *               ──(a handler threw)──▶ failed
 *
 * Every loop is a real transition, so the inspector shows the soul deliberating. Nothing the
 * model or a handler does can make the machine error: every failure is a `failed` final state
 * with the reason, because an error here would surface in the parent soul.
 */

/**
 * The one event the ISM accepts: stop now. The perception check only runs between loops;
 * this lets the soul (or `runIsm`, when the turn is cancelled) end it while a step or a
 * handler is still running. Their results are then ignored; the memory so far is returned.
 */
export type IsmEvent = { type: "ism.interrupt"; reason?: string };

// Exported (not part of the folder's surface) so the declaration of the soul machine, which
// embeds this machine's type, can name them in dist/*.d.ts.
export interface ChoiceActorInput {
  memory: WorkingMemory;
  prompt: ChoicePrompt;
  model: string | undefined;
  scope: IsmScope;
}

export interface ActingActorInput extends ActingInput {
  scope: IsmScope;
}

type ChoiceDone = DoneActorEvent<ChoiceResult>;
type ActingDone = DoneActorEvent<ActingResult>;
const choiceOf = ({ event }: { event: ChoiceDone }): ChoiceResult => event.output;
const actingOf = ({ event }: { event: ActingDone }): ActingResult => event.output;
const errorOf = ({ event }: { event: ErrorActorEvent }): { error: unknown } => ({ error: event.error });

function choiceEntry(loop: number, choice: ChoiceResult): DecisionLogEntry {
  switch (choice.kind) {
    case "done":
      return { loop, actions: choice.actions, reasoning: choice.reasoning, status: "done" };
    case "act":
      return { loop, actions: choice.actions, reasoning: choice.reasoning, status: "acted" };
    case "rejected":
      return { loop, actions: choice.actions, reasoning: choice.reasoning, status: "rejected", error: choice.error };
    case "failed":
      return { loop, actions: [], reasoning: "", status: "failed", error: choice.error };
  }
}

/** The last entry is the choice this loop acted on; the handlers' results complete it. */
function withResults(decisions: readonly DecisionLogEntry[], result: ActingResult): DecisionLogEntry[] {
  const last = decisions.at(-1);
  if (!last || last.status !== "acted") return [...decisions];
  const completed: DecisionLogEntry = { ...last, results: result.results };
  if (result.kind === "threw") completed.error = `${result.action} threw: ${result.error}`;
  return [...decisions.slice(0, -1), completed];
}

export const ismMachine = setup({
  types: {
    context: {} as IsmContext,
    input: {} as IsmMachineInput,
    output: {} as IsmOutput,
    events: {} as IsmEvent,
  },
  actors: {
    chooseAction: fromPromise<ChoiceResult, ChoiceActorInput>(({ input, signal }) =>
      inScope(input.scope, () => chooseNextActions(input.memory, input.prompt, { model: input.model, signal })),
    ),
    runActions: fromPromise<ActingResult, ActingActorInput>(({ input }) =>
      inScope(input.scope, () => runChosenActions(input)),
    ),
  },
  guards: {
    invalidConfig: ({ context }) => context.configError !== undefined,
    perceptionPending: ({ context }) => {
      try {
        return context.interrupted();
      } catch (error) {
        // A broken check must not end the soul's deliberation, nor keep it from ever ending.
        safeLog(context.log, `ISM: the interruption check threw: ${describeError(error)}`);
        return false;
      }
    },
    loopsExhausted: ({ context }) => context.loop >= context.maxLoops,
    choseDone: (_, choice: ChoiceResult) => choice.kind === "done",
    choseActions: (_, choice: ChoiceResult) => choice.kind === "act",
    mayRetryChoice: ({ context }, choice: ChoiceResult) =>
      choice.kind === "rejected" && context.retries < MAX_CHOICE_RETRIES,
    handlersContinued: (_, result: ActingResult) => result.kind === "continue",
    handlerEnded: (_, result: ActingResult) => result.kind === "done",
    handlerTransitioned: (_, result: ActingResult) => result.kind === "transition",
  },
  actions: {
    recordChoice: assign(({ context }, choice: ChoiceResult) => {
      const decisions = [...context.decisions, choiceEntry(context.loop, choice)];
      return {
        decisions,
        chosen: choice.kind === "act" ? choice.actions : [],
        internalMemory: mirrorDecisions(context.internalMemory, decisions),
      };
    }),
    logChoice: ({ context }, choice: ChoiceResult) => {
      const entry = choiceEntry(context.loop, choice);
      const data = { loop: entry.loop, actions: entry.actions, status: entry.status, error: entry.error };
      safeLog(context.log, `ISM ${formatDecision(entry)}`, data);
    },
    countChoiceRetry: assign(({ context }) => ({ retries: context.retries + 1 })),
    failChoice: assign((_, choice: ChoiceResult) => ({
      error:
        choice.kind === "rejected"
          ? `the model chose unknown actions again after being told (${choice.error})`
          : `no usable action choice: ${choice.kind === "failed" ? choice.error : choice.kind}`,
    })),
    recordActing: assign(({ context }, result: ActingResult) => {
      const decisions = withResults(context.decisions, result);
      const internalMemory = mirrorDecisions(result.internalMemory, decisions);
      // A handler may recurse with a memory built without the playbook (from the internal
      // memory, say); the next choice and handlers must still see it.
      const workingMemory =
        result.kind === "continue" ? withPlaybook(result.workingMemory, context.goal, context.playbook) : result.workingMemory;
      return {
        decisions,
        workingMemory,
        internalMemory,
        loop: context.loop + 1,
        retries: 0,
        chosen: [],
        next: result.kind === "transition" ? result.next : context.next,
        error: result.kind === "threw" ? `${result.action} threw: ${result.error}` : context.error,
      };
    }),
    logHandlerError: ({ context }, result: ActingResult) => {
      if (result.kind !== "threw") return;
      safeLog(context.log, `ISM loop ${context.loop}: action ${result.action} failed: ${result.error}`, {
        loop: context.loop,
        action: result.action,
        error: result.error,
      });
    },
    recordCrash: assign((_, { error }: { error: unknown }) => ({ error: `ISM step crashed: ${describeError(error)}` })),
    logCrash: ({ context }, { error }: { error: unknown }) =>
      safeLog(context.log, `ISM step crashed: ${describeError(error)}`, { loop: context.loop }),
    settle: assign((_, { outcome }: { outcome: IsmOutcome }) => ({ outcome })),
    logInterrupt: ({ context }, { reason }: { reason: string | undefined }) =>
      safeLog(context.log, `ISM interrupted${reason ? `: ${reason}` : ""}`, { loop: context.loop }),
    logOutcome: ({ context }, { outcome }: { outcome: IsmOutcome }) =>
      safeLog(context.log, `ISM ended: ${outcome} after ${context.loop} loop(s)${context.error ? ` (${context.error})` : ""}`, {
        outcome,
        loops: context.loop,
        error: context.error,
      }),
  },
}).createMachine({
  id: "ism",
  context: ({ input }) => initialContext(input),
  initial: "checkPerceptions",
  on: {
    "ism.interrupt": {
      target: ".interrupted",
      actions: { type: "logInterrupt", params: ({ event }) => ({ reason: event.reason }) },
    },
  },
  states: {
    checkPerceptions: {
      description: "Before every loop: stop for a pending perception, or at the loop bound.",
      always: [
        { guard: "invalidConfig", target: "failed" },
        { guard: "perceptionPending", target: "interrupted" },
        { guard: "loopsExhausted", target: "exhausted" },
        { target: "selecting" },
      ],
    },
    selecting: {
      description: "The model picks one or more actions (or DONE) from goal, playbook and decision log.",
      invoke: {
        src: "chooseAction",
        input: ({ context }) => ({
          memory: context.workingMemory,
          prompt: {
            goal: context.goal,
            playbook: context.playbook,
            actions: context.actions.map(({ name, description }) => ({ name, description })),
            decisions: context.decisions,
          },
          model: context.model,
          scope: context.scope,
        }),
        onDone: [
          {
            guard: { type: "choseDone", params: choiceOf },
            target: "done",
            actions: [
              { type: "recordChoice", params: choiceOf },
              { type: "logChoice", params: choiceOf },
            ],
          },
          {
            guard: { type: "choseActions", params: choiceOf },
            target: "acting",
            actions: [
              { type: "recordChoice", params: choiceOf },
              { type: "logChoice", params: choiceOf },
            ],
          },
          {
            guard: { type: "mayRetryChoice", params: choiceOf },
            target: "selecting",
            reenter: true,
            actions: [
              { type: "recordChoice", params: choiceOf },
              { type: "logChoice", params: choiceOf },
              "countChoiceRetry",
            ],
          },
          {
            target: "failed",
            actions: [
              { type: "recordChoice", params: choiceOf },
              { type: "logChoice", params: choiceOf },
              { type: "failChoice", params: choiceOf },
            ],
          },
        ],
        onError: {
          target: "failed",
          actions: [
            { type: "recordCrash", params: errorOf },
            { type: "logCrash", params: errorOf },
          ],
        },
      },
    },
    acting: {
      description: "The chosen handlers run in order; each recurses, ends the ISM, or transitions.",
      invoke: {
        src: "runActions",
        input: ({ context }) => ({
          actions: context.actions,
          chosen: context.chosen,
          workingMemory: context.workingMemory,
          internalMemory: context.internalMemory,
          scope: context.scope,
        }),
        onDone: [
          {
            guard: { type: "handlersContinued", params: actingOf },
            target: "checkPerceptions",
            actions: { type: "recordActing", params: actingOf },
          },
          {
            guard: { type: "handlerEnded", params: actingOf },
            target: "done",
            actions: { type: "recordActing", params: actingOf },
          },
          {
            guard: { type: "handlerTransitioned", params: actingOf },
            target: "transition",
            actions: { type: "recordActing", params: actingOf },
          },
          {
            target: "failed",
            actions: [
              { type: "recordActing", params: actingOf },
              { type: "logHandlerError", params: actingOf },
            ],
          },
        ],
        onError: {
          target: "failed",
          actions: [
            { type: "recordCrash", params: errorOf },
            { type: "logCrash", params: errorOf },
          ],
        },
      },
    },
    done: {
      type: "final",
      description: "The model said DONE, or a handler returned a memory.",
      entry: [
        { type: "settle", params: { outcome: "done" } },
        { type: "logOutcome", params: { outcome: "done" } },
      ],
    },
    transition: {
      type: "final",
      description: "A handler returned [memory, process, { executeNow, params }].",
      entry: [
        { type: "settle", params: { outcome: "transition" } },
        { type: "logOutcome", params: { outcome: "transition" } },
      ],
    },
    interrupted: {
      type: "final",
      description: "A perception arrived while the ISM deliberated.",
      entry: [
        { type: "settle", params: { outcome: "interrupted" } },
        { type: "logOutcome", params: { outcome: "interrupted" } },
      ],
    },
    exhausted: {
      type: "final",
      description: "maxLoops loops ran without the goal being met.",
      entry: [
        { type: "settle", params: { outcome: "exhausted" } },
        { type: "logOutcome", params: { outcome: "exhausted" } },
      ],
    },
    failed: {
      type: "final",
      description: "No usable choice, a handler threw, or the configuration is invalid.",
      entry: [
        { type: "settle", params: { outcome: "failed" } },
        { type: "logOutcome", params: { outcome: "failed" } },
      ],
    },
  },
  output: ({ context }) => outputFromContext(context),
});

export type IsmMachine = typeof ismMachine;
