/**
 * Node control on `ensoul.<cluster>.node.<nodeId>.<verb>` (docs/PROTOCOL.md, section 12).
 * Bodies are plain msgpack maps, like envelopes but without the envelope around them:
 * control traffic is between operators and nodes, not between actors.
 *
 * - `heartbeat`: published by every node every `runtime.heartbeatMs` (core), a NodeStatus.
 * - `status`: request `{}` → NodeStatus.
 * - `memory`: request `{ soulId }` → SoulMemoryReply, or `{ error }`.
 * - `daimon`: request `{ soulId, mode, name? }` → DaimonModeReply, or `{ error }`.
 * - `stop`: request `{}` → `{ ok: true, node }`, then the node drains and exits.
 */
import { Packr, Unpackr } from "msgpackr";

export const CONTROL_VERBS = ["heartbeat", "status", "memory", "daimon", "stop"] as const;
export type ControlVerb = (typeof CONTROL_VERBS)[number];

export type SoulRunStatus = "active" | "running" | "passivated" | "stopped" | "expired";

export interface SoulStatusEntry {
  id: string;
  /** The blueprint's display name ("Samantha"). */
  name: string;
  /** The current mental process. */
  process: string;
  /** Committed turns. */
  turns: number;
  /** Perceptions waiting: queued in the soul plus those on their way into its inbox. */
  pending: number;
  status: SoulRunStatus;
}

export interface DaimonStatusEntry {
  soul: string;
  name: string;
  mode: string;
}

export interface BridgeStatusEntry {
  name: string;
  type: string;
  soul: string;
  /** connecting, online, reconnecting, stopping, stopped or failed. */
  state: string;
  counters: Record<string, number>;
  lastError?: string;
  url?: string;
}

export interface NodeStatus {
  node: string;
  cluster: string;
  pid: number;
  /** Epoch ms. */
  startedAt: number;
  state: "starting" | "running" | "stopping" | "stopped";
  /** "nats" or "in-process". */
  bus: string;
  souls: SoulStatusEntry[];
  daimons: DaimonStatusEntry[];
  /** Skills this node serves as skill-gate actors. */
  skillGates: string[];
  /** The bridges this node runs (absent from nodes older than the bridges). */
  bridges?: BridgeStatusEntry[];
  /** Counters since start. */
  counters: NodeCounters;
  /**
   * The souls the cluster config places on other nodes, by node id (absent when one process
   * runs the whole cluster): a soul listed here whose node sends no heartbeat is down, not unknown.
   */
  elsewhere?: Record<string, string[]>;
}

export interface NodeCounters {
  perceptions: number;
  duplicates: number;
  dead: number;
  whispers: number;
  heard: number;
}

export interface MemoryRequest {
  soulId: string;
}

export interface SoulMemoryReply {
  soulId: string;
  node: string;
  process: string;
  turns: number;
  /** Serialised WorkingMemory: `{ soulName, memories, regionOrder }`. */
  workingMemory: unknown;
  soulMemory: Record<string, unknown>;
  /** Perceptions still in the inbox, and those whose processing failed. */
  inbox: { pending: number; failed: number };
  live: boolean;
  /** True when the oldest memories were left out to fit the reply in one message. */
  truncated?: boolean;
}

export interface DaimonModeRequest {
  soulId: string;
  mode: string;
  /** Which daimon, when the soul has several (default: all of them). */
  name?: string;
}

export interface DaimonModeReply {
  soulId: string;
  daimons: DaimonStatusEntry[];
}

export interface ControlError {
  error: string;
}

export interface StopReply {
  ok: true;
  node: string;
}

const packr = new Packr({ useRecords: false, variableMapSize: true, moreTypes: false, structuredClone: false, encodeUndefinedAsNil: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number", structuredClone: false });

export function encodeControl(body: object): Uint8Array {
  return packr.pack(withoutUndefined(body));
}

/** Never throws: a body that is not a msgpack map reads as `{ error }`. */
export function decodeControl<T extends object>(bytes: Uint8Array): T | ControlError {
  try {
    const value = unpackr.unpack(bytes) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { error: "control body is not a msgpack map" };
    return value as T;
  } catch (err) {
    return { error: `control body is not msgpack: ${(err as Error).message.split("\n")[0].slice(0, 120)}` };
  }
}

export function isControlError(value: unknown): value is ControlError {
  return typeof value === "object" && value !== null && typeof (value as ControlError).error === "string";
}

function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = withoutUndefined(v);
  return out;
}
