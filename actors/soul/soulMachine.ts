import { assign, fromPromise, sendTo, setup, type EventObject, type SnapshotFrom } from "xstate";
import { ismMachine } from "../ism/index.ts";
import { isIsmProcess } from "../ism/index.ts";
import type { IsmOutput } from "../ism/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { ProcessParams } from "../vocabulary/index.ts";
import type { Perception } from "../vocabulary/index.ts";
import { PerceptionQueue } from "./PerceptionQueue.ts";
import { hostOf, type IsmFinishInput, type IsmPrepared, type IsmResult, type RunInput, type RunOutput, type SubprocessInput, type SubprocessOutput } from "./soulMachineHost.ts";

/**
 * The soul as an XState machine: one state per mental process, each with `idle`, `running`
 * (the process, invoked) and `subprocesses`. The machine decides *what* runs *when*; the
 * work itself (running a process, committing a turn) is done by the soul's runtime, reached
 * through the actor system, so one machine serves every soul made from a blueprint.
 *
 * A process made with `ismProcess` is an ISM through and through, and its state says so:
 * `running` is `preparing -> ism -> finishing`, and `ism` invokes the ISM machine itself, so
 * the inspector draws the deliberation as that state's sub-machine.
 */

export interface SoulMachineContext {
  /** The process the soul is in between turns: the last committed one. */
  current: string;
  /** Perceptions waiting their turn, in arrival order; the running process sees them. An inspector sees their count and first ids. */
  queue: PerceptionQueue;
  /** The perception this turn is processing. */
  perception: Perception | null;
  /** executeNow hand-overs taken in this turn. */
  chain: number;
  /** Params for the run under way. */
  runParams: ProcessParams | null;
  /** Params a transition left for the current process's next run. */
  nextParams: ProcessParams | null;
  stopping: boolean;
}

export type SoulMachineEvent =
  | { type: "PERCEIVE"; perception: Perception }
  | { type: "SCHEDULED"; perception: Perception }
  | { type: "WHISPER"; content: string; source: string }
  | { type: "STOP" };

/** The output carried by an invoked actor's done event. */
function outputOf<T>(event: EventObject): T | undefined {
  return (event as { output?: T }).output;
}

export const MAX_EXECUTE_NOW = 10;

/** The ISM's end, from the event that left the `ism` state. */
function ismResultOf(event: EventObject): IsmResult {
  if (event.type.startsWith("xstate.done.actor.")) {
    const output = outputOf<IsmOutput>(event);
    if (output) return { output };
  }
  const error = (event as { error?: unknown }).error;
  return { error: error instanceof Error ? error.message : String(error ?? `the ISM ended with ${event.type}`) };
}

/** The invoke id of an ISM process's machine: the child's id in the soul's actor system. */
export const ISM_CHILD = "ism";

const soulSetup = setup({
  types: {} as { context: SoulMachineContext; events: SoulMachineEvent },
  actors: {
    mentalProcess: fromPromise<RunOutput, RunInput>(({ input, system, signal }) => hostOf(system).runProcess(input, signal)),
    subprocesses: fromPromise<SubprocessOutput, SubprocessInput>(({ input, system, signal }) =>
      hostOf(system).runSubprocesses(input, signal),
    ),
    prepareIsm: fromPromise<IsmPrepared, RunInput>(({ input, system, signal }) => hostOf(system).prepareIsm(input, signal)),
    /** The one ISM machine every `ismProcess` runs (`IsmProcessMarker.machine`). */
    ism: ismMachine,
    finishIsm: fromPromise<RunOutput, IsmFinishInput>(({ input, system, signal }) => hostOf(system).finishIsm(input, signal)),
  },
  actions: {
    enqueue: assign({
      queue: ({ context, event }) =>
        event.type === "PERCEIVE" || event.type === "SCHEDULED" ? context.queue.enqueue(event.perception) : context.queue,
    }),
    takeNext: assign({
      perception: ({ context }) => context.queue.head ?? null,
      queue: ({ context }) => context.queue.dequeue(),
      runParams: ({ context }) => context.nextParams,
      chain: 0,
    }),
    takeRouted: assign({
      perception: ({ context }) => context.queue.head ?? null,
      queue: ({ context }) => context.queue.dequeue(),
      runParams: ({ context }) => context.queue.head?.params ?? null,
      chain: 0,
    }),
    /** A routed perception whose process is unknown runs in the current process instead. */
    unroute: assign({
      queue: ({ context }) => {
        const head = context.queue.head;
        if (!head) return context.queue;
        const { process: _dropped, ...plain } = head;
        return context.queue.replaceHead(plain);
      },
    }),
    chainNext: assign({
      chain: ({ context }) => context.chain + 1,
      runParams: ({ event }) => outputOf<RunOutput>(event)?.params ?? null,
    }),
    turnCommitted: assign({
      current: ({ context, event }) => outputOf<RunOutput>(event)?.next ?? context.current,
      nextParams: ({ event }) => outputOf<RunOutput>(event)?.params ?? null,
      chain: 0,
    }),
    settle: assign({
      current: ({ context, event }) => outputOf<SubprocessOutput>(event)?.next ?? context.current,
      nextParams: ({ context, event }) => {
        const out = outputOf<SubprocessOutput>(event);
        return out ? out.params : context.nextParams;
      },
      perception: null,
      runParams: null,
    }),
    handOver: assign({ perception: null, runParams: null }),
    turnFailed: assign({ chain: 0, perception: null, runParams: null }),
    markStopping: assign({ stopping: true }),
    /** The ISM checks for a stop only between loops; this ends a step or handler under way. */
    interruptIsm: sendTo(ISM_CHILD, { type: "ism.interrupt", reason: "the soul is stopping" }),
    cancelSubprocesses: ({ system }) => hostOf(system).cancelSubprocesses(),
    storeWhisper: ({ event, system }) => {
      if (event.type === "WHISPER") hostOf(system).whisper(event.content, event.source);
    },
  },
  guards: {
    stopping: ({ context }) => context.stopping,
    hasQueued: ({ context }) => context.queue.length > 0,
    routedHead: ({ context }) => {
      const head = context.queue.head;
      return head?.process !== undefined && head.process !== context.current;
    },
    routesTo: ({ context }, params: { process: string }) => context.queue.head?.process === params.process,
    isCurrent: ({ context }, params: { process: string }) => context.current === params.process,
    executeNowTo: ({ event }, params: { process: string }) => {
      const out = outputOf<RunOutput>(event);
      return out !== undefined && out.executeNow && out.next === params.process;
    },
    nextIs: ({ event }, params: { process: string }) => outputOf<SubprocessOutput>(event)?.next === params.process,
  },
});

/** With no subprocesses to run, the hand-over is decided from the context, with no actor to start. */
function handOverState(targets: readonly string[]) {
  return soulSetup.createStateConfig({
    always: [
      ...targets.map((to) => ({
        guard: { type: "isCurrent" as const, params: { process: to } },
        target: `#soul.${to}.idle`,
        actions: "handOver" as const,
      })),
      { target: "#soul.returning", actions: "handOver" },
    ],
  });
}

function subprocessState(name: string, targets: readonly string[]) {
  return soulSetup.createStateConfig({
    on: {
      PERCEIVE: { actions: ["enqueue", "cancelSubprocesses"] },
      SCHEDULED: { actions: ["enqueue", "cancelSubprocesses"] },
      STOP: { actions: ["markStopping", "cancelSubprocesses"] },
    },
    invoke: {
      src: "subprocesses",
      input: ({ context, event }) => {
        const out = outputOf<RunOutput>(event);
        return {
          process: name,
          next: out?.next ?? context.current,
          params: out ? out.params : context.nextParams,
          perception: context.perception as Perception,
          queued: context.queue.length > 0,
        };
      },
      onDone: [
        ...targets.map((to) => ({
          guard: { type: "nextIs" as const, params: { process: to } },
          target: `#soul.${to}.idle`,
          actions: "settle" as const,
        })),
        { target: "#soul.returning", actions: "settle" },
      ],
      onError: { target: "#soul.returning", actions: "settle" },
    },
  });
}

function runInputOf(name: string) {
  return ({ context }: { context: SoulMachineContext }): RunInput => ({
    process: name,
    perception: context.perception as Perception,
    params: context.runParams,
    chain: context.chain,
    current: context.current,
  });
}

/** Where a finished run goes: on at once (executeNow), or to the hand-over after its commit. */
function afterRun(name: string, targets: readonly string[]) {
  return [
    ...targets.map((to) => ({
      guard: { type: "executeNowTo" as const, params: { process: to } },
      target: `#soul.${to}.running`,
      reenter: true,
      actions: "chainNext" as const,
    })),
    { target: `#soul.${name}.subprocesses`, actions: "turnCommitted" as const },
  ];
}

function runningState(name: string, targets: readonly string[]) {
  return soulSetup.createStateConfig({
    invoke: {
      src: "mentalProcess",
      input: runInputOf(name),
      onDone: afterRun(name, targets),
      onError: { target: "#soul.returning", actions: "turnFailed" },
    },
  });
}

/**
 * The running state of an ISM process, one phase per state. The turn stays open from
 * `preparing` to `finishing`; only `finishing` commits. The ISM never errors by design (every
 * failure is its `failed` outcome); should the machine itself fail, `finishing` still runs and
 * ends the turn with the memory the ISM started from.
 */
function ismRunningState(name: string, targets: readonly string[]) {
  return soulSetup.createStateConfig({
    initial: "preparing",
    states: {
      preparing: {
        description: "Integrate the perception into memory and open the turn's draft.",
        invoke: {
          src: "prepareIsm",
          input: runInputOf(name),
          onDone: { target: "ism" },
          onError: { target: "#soul.returning", actions: "turnFailed" },
        },
      },
      ism: {
        description: "The ISM deliberates: choose actions, run handlers, loop; a queued perception interrupts it.",
        invoke: {
          id: ISM_CHILD,
          src: "ism",
          input: ({ self }) => hostOf(self.system).ismInput(name),
          onDone: { target: "finishing" },
          onError: { target: "finishing" },
        },
        on: { STOP: { actions: ["markStopping", "interruptIsm"] } },
      },
      finishing: {
        description: "The ISM's outcome as a process return: transition, executeNow, review, commit.",
        invoke: {
          src: "finishIsm",
          input: ({ context, event }) => ({ ...runInputOf(name)({ context }), result: ismResultOf(event) }),
          onDone: afterRun(name, targets),
          onError: { target: "#soul.returning", actions: "turnFailed" },
        },
      },
    },
  });
}

function processState(name: string, successors: readonly string[], hasSubprocesses: boolean, ism: boolean) {
  const targets = [name, ...successors];
  return soulSetup.createStateConfig({
    initial: "idle",
    states: {
      idle: {
        always: [
          { guard: "stopping", target: "#soul.stopped" },
          { guard: "routedHead", target: "#soul.routing" },
          { guard: "hasQueued", target: "running", actions: "takeNext" },
        ],
      },
      running: ism ? ismRunningState(name, targets) : runningState(name, targets),
      subprocesses: hasSubprocesses ? subprocessState(name, targets) : handOverState(targets),
    },
  });
}

/** Compiles a blueprint into its machine. Pure data plus named implementations. */
export function createSoulMachine(blueprint: SoulBlueprint) {
  const names = [...blueprint.processes.keys()];
  const states: Record<string, ReturnType<typeof processState>> = {};
  const hasSubprocesses = blueprint.subprocesses.length > 0;
  for (const declared of blueprint.processes.values()) {
    states[declared.name] = processState(declared.name, declared.next, hasSubprocesses, isIsmProcess(declared.process));
  }
  return soulSetup.createMachine({
    id: "soul",
    context: {
      current: blueprint.initialProcess,
      queue: PerceptionQueue.empty,
      perception: null,
      chain: 0,
      runParams: null,
      nextParams: null,
      stopping: false,
    },
    initial: blueprint.initialProcess,
    on: {
      PERCEIVE: { actions: "enqueue" },
      SCHEDULED: { actions: "enqueue" },
      WHISPER: { actions: "storeWhisper" },
      STOP: { actions: "markStopping" },
    },
    states: {
      ...states,
      /** A scheduled perception names the process that runs it. */
      routing: {
        always: [
          ...names.map((to) => ({
            guard: { type: "routesTo" as const, params: { process: to } },
            target: `#soul.${to}.running`,
            actions: "takeRouted" as const,
          })),
          { target: "#soul.returning", actions: "unroute" },
        ],
      },
      /** Back to the current process: after a failed turn, a routed turn, a cancelled phase. */
      returning: {
        always: names.map((to) => ({
          guard: { type: "isCurrent" as const, params: { process: to } },
          target: `#soul.${to}.idle`,
        })),
      },
      stopped: { type: "final" },
    },
  });
}

export type SoulMachine = ReturnType<typeof createSoulMachine>;

const machines = new WeakMap<SoulBlueprint, SoulMachine>();

/** One machine per blueprint, shared by every soul made from it. */
export function soulMachineOf(blueprint: SoulBlueprint): SoulMachine {
  let machine = machines.get(blueprint);
  if (!machine) machines.set(blueprint, (machine = createSoulMachine(blueprint)));
  return machine;
}
export type SoulSnapshot = SnapshotFrom<SoulMachine>;
