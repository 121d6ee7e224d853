/**
 * The daimon as an XState machine:
 *
 *        off ──(mode on)──▶ listening
 *         ▲                  ├─ watching ──(divination due)──▶ divining
 *         │                  ├─ divining ──(an intuition)────▶ whispering ─┐
 *         │                  │           ──(nothing / error)─▶ watching    │
 *         │                  └─ whispering ──(delivered)─────▶ watching ◀──┘
 *         └──────(SET_MODE off, from anywhere)
 *
 * `listening` owns the subscriptions (the `observe` actor), so a daimon that is off holds no
 * subscription and calls no model: switching off stops them, whatever was in flight. The
 * machine knows nothing of buses or HTTP; `createDaimonMachine` provides the three actors
 * (observe, divine, deliver), so unit tests drive it with plain events.
 */
import { assign, fromCallback, fromPromise, setup, type Actor, type DoneActorEvent, type ErrorActorEvent, type SnapshotFrom } from "xstate";
import { assertDaimonMode, speaksIn, type DaimonMode } from "./daimonMode.ts";
import type { Divination } from "./divination.ts";
import { sanitizeWhisper } from "./sanitizeWhisper.ts";
import { appendLine, DEFAULT_TRANSCRIPT_LINES, type TranscriptLine } from "./transcript.ts";

/** What the daimon notices: someone speaking to the soul, or the soul's own final words. */
export type DaimonObservation =
  | { type: "OBSERVE_PERCEPTION"; name: string; content: string; id?: string; meta?: Record<string, unknown> }
  | { type: "OBSERVE_SPEECH"; content: string };

export type DaimonEvent = DaimonObservation | { type: "SET_MODE"; mode: DaimonMode } | { type: "STOP" };

/** Decides when to divine, instead of every N exchanges; called after each observation while watching. */
export type ShouldDivine = (transcript: readonly TranscriptLine[], progress: { exchanges: number; interactionCount: number }) => boolean;

export type DaimonErrorPhase = "divining" | "whispering" | "shouldDivine";

export const DEFAULT_EVERY_N = 3;

export interface DaimonMachineInput {
  soulName: string;
  daimonName: string;
  mode: DaimonMode;
  /** Divine after this many exchanges (someone spoke, the soul answered). Default 3. */
  everyN?: number;
  /** Transcript lines kept. Default 12. */
  maxLines?: number;
}

/** The perception the soul was last answering: the daimon's words go where it came from. */
export interface ObservedPerception {
  id?: string;
  meta?: Record<string, unknown>;
}

/** One intuition on its way out, with the mode it was divined under. */
export interface DaimonDelivery {
  intuition: string;
  mode: DaimonMode;
  soulName: string;
  daimonName: string;
  replyTo: ObservedPerception | null;
}

export interface DivineInput {
  soulName: string;
  daimonName: string;
  transcript: readonly TranscriptLine[];
  interactionCount: number;
}

export interface ObserveInput {
  soulName: string;
  daimonName: string;
}

export interface DaimonContext {
  soulName: string;
  daimonName: string;
  mode: DaimonMode;
  everyN: number;
  maxLines: number;
  transcript: readonly TranscriptLine[];
  /** Exchanges since the last divination began. */
  exchanges: number;
  /** Exchanges watched in all. */
  interactionCount: number;
  /** Someone spoke and the soul has not answered yet: the next speech completes an exchange. */
  awaitingReply: boolean;
  lastPerception: ObservedPerception | null;
  delivery: DaimonDelivery | null;
  divinations: number;
  deliveries: number;
  lastDelivery: DaimonDelivery | null;
  lastError: string | null;
}

function positiveInt(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`daimon ${field} must be a positive integer, got ${value}`);
  return value;
}

/**
 * The input with its defaults, or a clear error. Call it before creating an actor: XState
 * turns a throw in the context factory into an error snapshot plus an unhandled error.
 */
export function checkDaimonInput(input: DaimonMachineInput): Required<DaimonMachineInput> {
  return {
    soulName: input.soulName,
    daimonName: input.daimonName,
    mode: assertDaimonMode(input.mode),
    everyN: positiveInt("everyN", input.everyN, DEFAULT_EVERY_N),
    maxLines: positiveInt("maxLines", input.maxLines, DEFAULT_TRANSCRIPT_LINES),
  };
}

function initialContext(input: DaimonMachineInput): DaimonContext {
  return {
    ...checkDaimonInput(input),
    transcript: [],
    exchanges: 0,
    interactionCount: 0,
    awaitingReply: false,
    lastPerception: null,
    delivery: null,
    divinations: 0,
    deliveries: 0,
    lastDelivery: null,
    lastError: null,
  };
}

type Observed = Pick<DaimonContext, "transcript" | "exchanges" | "interactionCount" | "awaitingReply" | "lastPerception">;

/** The context after one observation: pure, so the guard and the action agree on it. */
export function applyObservation(context: DaimonContext, event: DaimonEvent): Observed {
  const { transcript, exchanges, interactionCount, awaitingReply, lastPerception } = context;
  if (event.type === "OBSERVE_PERCEPTION") {
    const line: TranscriptLine = { speaker: event.name || "Someone", role: "other", text: event.content };
    const seen: ObservedPerception = {};
    if (event.id !== undefined) seen.id = event.id;
    if (event.meta !== undefined) seen.meta = event.meta;
    return { transcript: appendLine(transcript, line, context.maxLines), exchanges, interactionCount, awaitingReply: true, lastPerception: seen };
  }
  if (event.type === "OBSERVE_SPEECH") {
    const line: TranscriptLine = { speaker: context.soulName, role: "soul", text: event.content };
    // Only an answer to someone counts: the soul answering the daimon itself must not make
    // the daimon divine again, or daimon and soul would talk to each other forever.
    const answered = awaitingReply ? 1 : 0;
    return {
      transcript: appendLine(transcript, line, context.maxLines),
      exchanges: exchanges + answered,
      interactionCount: interactionCount + answered,
      awaitingReply: false,
      lastPerception,
    };
  }
  return { transcript, exchanges, interactionCount, awaitingReply, lastPerception };
}

const outputOf = ({ event }: { event: DoneActorEvent<string | null | undefined> }) => event.output;
const divineErrorOf = ({ event }: { event: ErrorActorEvent }) => ({ error: event.error, phase: "divining" as const });
const deliverErrorOf = ({ event }: { event: ErrorActorEvent }) => ({ error: event.error, phase: "whispering" as const });

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const daimonMachine = setup({
  types: {
    context: {} as DaimonContext,
    events: {} as DaimonEvent,
    input: {} as DaimonMachineInput,
  },
  actors: {
    // Placeholders: createDaimonMachine provides the real ones.
    observe: fromCallback<DaimonEvent, ObserveInput>(() => undefined),
    divine: fromPromise<string | null | undefined, DivineInput>(async () => {
      throw new Error("daimon machine has no divination; build it with createDaimonMachine");
    }),
    deliver: fromPromise<void, DaimonDelivery>(async () => undefined),
  },
  guards: {
    modeOn: ({ context }) => context.mode !== "off",
    switchesOff: ({ event }) => event.type === "SET_MODE" && event.mode === "off",
    divinationDue: ({ context, event }) => {
      const next = applyObservation(context, event);
      return next.transcript.length > 0 && next.exchanges >= context.everyN;
    },
    hasIntuition: (_, output: string | null | undefined) => sanitizeWhisper(output ?? "") !== "",
  },
  actions: {
    setMode: assign(({ context, event }) => (event.type === "SET_MODE" ? { mode: assertDaimonMode(event.mode) } : { mode: context.mode })),
    record: assign(({ context, event }) => applyObservation(context, event)),
    // A daimon that was not listening has a gap in what it heard: it starts afresh.
    forget: assign({ transcript: [], exchanges: 0, awaitingReply: false, lastPerception: null, delivery: null }),
    beginDivination: assign(({ context }) => ({ exchanges: 0, divinations: context.divinations + 1 })),
    prepareDelivery: assign(({ context }, output: string | null | undefined) => ({
      delivery: {
        intuition: sanitizeWhisper(output ?? ""),
        mode: context.mode,
        soulName: context.soulName,
        daimonName: context.daimonName,
        replyTo: context.lastPerception,
      },
    })),
    recordDelivery: assign(({ context }) => {
      const delivery = context.delivery;
      if (!delivery) return {};
      // What the daimon said aloud is part of the conversation it watches.
      const transcript = speaksIn(delivery.mode)
        ? appendLine(context.transcript, { speaker: context.daimonName, role: "daimon", text: delivery.intuition }, context.maxLines)
        : context.transcript;
      return { transcript, delivery: null, lastDelivery: delivery, deliveries: context.deliveries + 1, lastError: null };
    }),
    dropDelivery: assign({ delivery: null }),
    recordError: assign((_, params: { error: unknown; phase: DaimonErrorPhase }) => ({
      lastError: `${params.phase}: ${describeError(params.error)}`,
    })),
    // Provided by createDaimonMachine: where failures are reported.
    reportError: (_, _params: { error: unknown; phase: DaimonErrorPhase }) => undefined,
  },
}).createMachine({
  id: "daimon",
  context: ({ input }) => initialContext(input),
  initial: "off",
  on: {
    SET_MODE: [{ guard: "switchesOff", target: ".off", actions: "setMode" }, { actions: "setMode" }],
    STOP: { target: ".stopped" },
  },
  states: {
    off: {
      description: "Costs nothing: no subscriptions, no model calls, nothing remembered.",
      entry: "forget",
      always: { guard: "modeOn", target: "listening" },
      on: { SET_MODE: { actions: "setMode" } },
    },
    listening: {
      description: "Subscribed to the soul's perceive and says subjects, keeping a short transcript.",
      invoke: { src: "observe", input: ({ context }) => ({ soulName: context.soulName, daimonName: context.daimonName }) },
      initial: "watching",
      on: {
        OBSERVE_PERCEPTION: { actions: "record" },
        OBSERVE_SPEECH: { actions: "record" },
      },
      states: {
        watching: {
          description: "Waits until a divination is due (every N exchanges, or the shouldDivine hook).",
          on: {
            OBSERVE_PERCEPTION: [{ guard: "divinationDue", target: "divining", actions: "record" }, { actions: "record" }],
            OBSERVE_SPEECH: [{ guard: "divinationDue", target: "divining", actions: "record" }, { actions: "record" }],
          },
        },
        divining: {
          description: "The daimon's persona and model (or a remote daimon) read the transcript for an intuition.",
          entry: "beginDivination",
          invoke: {
            src: "divine",
            input: ({ context }) => ({
              soulName: context.soulName,
              daimonName: context.daimonName,
              transcript: context.transcript,
              interactionCount: context.interactionCount,
            }),
            onDone: [
              {
                guard: { type: "hasIntuition", params: outputOf },
                target: "whispering",
                actions: { type: "prepareDelivery", params: outputOf },
              },
              { target: "watching" },
            ],
            onError: {
              target: "watching",
              actions: [
                { type: "recordError", params: divineErrorOf },
                { type: "reportError", params: divineErrorOf },
              ],
            },
          },
        },
        whispering: {
          description: "Publishes the intuition by mode: a whisper to the soul, the daimon's own speech, or both.",
          invoke: {
            src: "deliver",
            input: ({ context }) => context.delivery as DaimonDelivery,
            onDone: { target: "watching", actions: "recordDelivery" },
            onError: {
              target: "watching",
              actions: [
                { type: "recordError", params: deliverErrorOf },
                { type: "reportError", params: deliverErrorOf },
                "dropDelivery",
              ],
            },
          },
        },
      },
    },
    stopped: { type: "final" },
  },
});

export type DaimonMachine = typeof daimonMachine;
export type DaimonActor = Actor<DaimonMachine>;
export type DaimonSnapshot = SnapshotFrom<DaimonMachine>;
export type DaimonPhase = "off" | "watching" | "divining" | "whispering" | "stopped";

/** The one state name a snapshot is in, flattened for logs and tests. */
export function daimonPhase(snapshot: DaimonSnapshot): DaimonPhase {
  if (snapshot.status === "done" || snapshot.matches("stopped")) return "stopped";
  if (snapshot.matches("off")) return "off";
  if (snapshot.matches({ listening: "divining" })) return "divining";
  if (snapshot.matches({ listening: "whispering" })) return "whispering";
  return "watching";
}

export interface DaimonImplementations {
  divine: Divination;
  /** Publishes a delivery; without one, deliveries only show in the snapshot (tests). */
  deliver?: (delivery: DaimonDelivery, signal: AbortSignal) => Promise<void>;
  /** Starts listening and returns how to stop; called only while the daimon is on. */
  observe?: (emit: (observation: DaimonObservation) => void) => () => void;
  shouldDivine?: ShouldDivine;
  onError?: (error: unknown, phase: DaimonErrorPhase) => void;
}

/** The daimon machine with its actors provided. */
export function createDaimonMachine(impl: DaimonImplementations): DaimonMachine {
  const { divine, deliver, observe, shouldDivine, onError } = impl;
  const report = (error: unknown, phase: DaimonErrorPhase) => {
    try {
      onError?.(error, phase);
    } catch {
      // A failing reporter must not take the daimon down with it.
    }
  };
  return daimonMachine.provide({
    actors: {
      observe: fromCallback<DaimonEvent, ObserveInput>(({ sendBack }) => (observe ? observe((o) => sendBack(o)) : undefined)),
      divine: fromPromise<string | null | undefined, DivineInput>(({ input, signal }) => divine({ ...input, signal })),
      deliver: fromPromise<void, DaimonDelivery>(({ input, signal }) => (deliver ? deliver(input, signal) : Promise.resolve())),
    },
    guards: shouldDivine
      ? {
          divinationDue: ({ context, event }) => {
            if (event.type !== "OBSERVE_PERCEPTION" && event.type !== "OBSERVE_SPEECH") return false;
            const next = applyObservation(context, event);
            try {
              return shouldDivine(next.transcript, { exchanges: next.exchanges, interactionCount: next.interactionCount }) === true;
            } catch (error) {
              // A broken hook means no divination, not a dead daimon.
              report(error, "shouldDivine");
              return false;
            }
          },
        }
      : {},
    actions: { reportError: (_, params) => report(params.error, params.phase) },
  });
}
