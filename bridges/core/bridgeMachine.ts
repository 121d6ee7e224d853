/**
 * A bridge as an XState machine, so its connection is visible (inspector, `ensoul status`):
 *
 *   connecting ──CONNECTED──▶ online ──DISCONNECTED──▶ reconnecting ──CONNECTED──▶ online
 *        │                      │                           │
 *        └──────────────── STOP (from anywhere) ──▶ stopping ──STOPPED──▶ stopped
 *   FAILED (the platform refused it: a bad token, a port taken) ──▶ failed
 *
 * The machine owns no sockets: the platform's SDK connects and reconnects (Bolt's socket
 * client, discord.js's gateway with RESUME), and the bridge reports what it sees. Its context
 * counts what went through, so "why didn't it answer?" shows here as well as in the events.
 */
import { assign, setup, type Actor, type SnapshotFrom } from "xstate";
import type { BridgeType } from "./PlatformMessage.ts";

export type BridgeCounters = {
  /** Platform messages taken (duplicates included). */
  received: number;
  /** Published as perceptions. */
  perceptions: number;
  /** Repeats of a message already taken (a platform retry, a gateway replay). */
  duplicates: number;
  /** Ignored by the policy. */
  ignored: number;
  /** Messages posted to the platform, and edits made while streaming. */
  posted: number;
  edits: number;
  /** Posts found already made after a restart, so not made again. */
  recovered: number;
};

export interface BridgeContext {
  name: string;
  type: BridgeType;
  soul: string;
  counters: BridgeCounters;
  lastError?: string;
  lastIgnored?: string;
  /** Times the platform connection was lost. */
  disconnects: number;
}

export type BridgeEvent =
  | { type: "CONNECTED" }
  | { type: "DISCONNECTED"; reason: string }
  | { type: "FAILED"; error: string }
  | { type: "STOP" }
  | { type: "STOPPED" }
  | { type: "COUNT"; counter: keyof BridgeCounters; by?: number }
  | { type: "IGNORED"; reason: string }
  | { type: "ERROR"; error: string };

export const EMPTY_COUNTERS: BridgeCounters = { received: 0, perceptions: 0, duplicates: 0, ignored: 0, posted: 0, edits: 0, recovered: 0 };

export const bridgeMachine = setup({
  types: {
    context: {} as BridgeContext,
    events: {} as BridgeEvent,
    input: {} as { name: string; type: BridgeType; soul: string },
  },
  actions: {
    count: assign({
      counters: ({ context, event }) => (event.type === "COUNT" ? { ...context.counters, [event.counter]: context.counters[event.counter] + (event.by ?? 1) } : context.counters),
    }),
    ignored: assign({
      counters: ({ context }) => ({ ...context.counters, ignored: context.counters.ignored + 1 }),
      lastIgnored: ({ event }) => (event.type === "IGNORED" ? event.reason : undefined),
    }),
    error: assign({ lastError: ({ event }) => (event.type === "ERROR" || event.type === "FAILED" || event.type === "DISCONNECTED" ? ("error" in event ? event.error : event.reason) : undefined) }),
  },
}).createMachine({
  id: "bridge",
  context: ({ input }) => ({ ...input, counters: { ...EMPTY_COUNTERS }, disconnects: 0 }),
  initial: "connecting",
  on: {
    COUNT: { actions: "count" },
    IGNORED: { actions: "ignored" },
    ERROR: { actions: "error" },
    STOP: ".stopping",
    FAILED: { target: ".failed", actions: "error" },
  },
  states: {
    connecting: { on: { CONNECTED: "online", DISCONNECTED: { target: "reconnecting", actions: "error" } } },
    online: {
      on: {
        DISCONNECTED: { target: "reconnecting", actions: ["error", assign({ disconnects: ({ context }) => context.disconnects + 1 })] },
      },
    },
    reconnecting: { on: { CONNECTED: "online" } },
    stopping: { on: { STOPPED: "stopped", STOP: {}, FAILED: {} } },
    stopped: { type: "final" },
    failed: { on: { STOP: "stopping", CONNECTED: "online" } },
  },
});

export type BridgeMachine = typeof bridgeMachine;
export type BridgeActor = Actor<BridgeMachine>;
export type BridgeSnapshot = SnapshotFrom<BridgeMachine>;

/** The machine's state as one word: connecting, online, reconnecting, stopping, stopped or failed. */
export function bridgeStateOf(snapshot: BridgeSnapshot): string {
  return typeof snapshot.value === "string" ? snapshot.value : JSON.stringify(snapshot.value);
}
