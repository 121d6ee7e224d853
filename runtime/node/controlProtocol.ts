/**
 * Node control on `ensoul.<cluster>.node.<nodeId>.<verb>` (docs/PROTOCOL.md, section 12).
 * Bodies are plain msgpack maps, like envelopes but without the envelope around them:
 * control traffic is between operators and nodes, not between actors.
 *
 * - `heartbeat`: published by every node every `runtime.heartbeatMs` (core), a NodeStatus.
 * - `status`: request `{ soulIds? }` or `{ after?, limit? }` (all optional) → NodeStatus.
 * - `memory`: request `{ soulId }` → SoulMemoryReply, or `{ error }`.
 * - `daimon`: request `{ soulId, mode, name? }` → DaimonModeReply, or `{ error }`.
 * - `stop`: request `{}` → `{ ok: true, node }`, then the node drains and exits.
 * - `soul`: request `{ soulId }` → SoulDetailReply, or `{ error, code }`.
 * - `turns`: request `{ soulId, before?, limit? }` → TurnsReply, or `{ error, code }`.
 * - `revert`: request `{ soulId, turn, by? }` → RevertReply, or `{ error, code }`.
 */
import { Packr, Unpackr } from "msgpackr";
import type { ProposalOutcome } from "../../actors/soul/index.ts";

/** A control reply stays under NATS's default max_payload (1 MiB), with room for headers. */
export const MAX_REPLY_BYTES = 1_000_000;

export const CONTROL_VERBS = ["heartbeat", "status", "memory", "daimon", "stop", "soul", "turns", "revert"] as const;
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
  /** Epoch ms of the last committed turn since the node started. */
  lastTurnAt?: number;
  /** Turns committed in the last minute. */
  turnsPerMinute?: number;
  /** Model tokens spent since the node started. */
  tokens?: TokenCount;
  /** Under `placement: auto`: why the soul runs on this node (pinned, or rendezvous over the live nodes, named). */
  placement?: string;
}

export interface TokenCount {
  input: number;
  output: number;
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
  /** How many souls the node lists in all (absent from nodes older than it): `souls` may hold fewer. */
  soulCount?: number;
  /**
   * True when `souls` holds fewer than `soulCount` entries: every soul's entry did not fit in one
   * message (or the request asked for some). Ask `status` with `soulIds` or page with `after`.
   */
  soulsPartial?: true;
  /** In a page (`status` with `after` or `limit`): the `after` of the next page, absent at the end. */
  next?: string;
}

/**
 * The `status` request (every field optional; `{}` is the heartbeat's body, current). `soulIds`:
 * only those souls' entries. `after`/`limit`: a page of the souls in the node's order.
 */
export interface StatusRequest {
  soulIds?: string[];
  /** The souls after this one (from the first when absent). */
  after?: string;
  /** At most this many (at least 1; default as many as fit in one message). */
  limit?: number;
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
  /** The newest of the failed ones (at most MAX_FAILED_LISTED), oldest first, each with its reason and attempts. */
  failedPerceptions?: FailedPerception[];
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

/** Why a request failed, for a client that maps it (the debugger's HTTP statuses). */
export type ControlErrorCode = "not-found" | "bad-request" | "conflict";

export interface ControlError {
  error: string;
  code?: ControlErrorCode;
}

export interface SoulDetailRequest {
  soulId: string;
}

export interface UserModelVersionEntry {
  version: number;
  [field: string]: unknown;
}

export interface SoulDetailReply {
  soulId: string;
  node: string;
  soul: SoulStatusEntry;
  workingMemory: unknown;
  soulMemory: Record<string, unknown>;
  processMemory: Record<string, unknown[]>;
  schedules: unknown[];
  userModels: { userId: string; versions: UserModelVersionEntry[] }[];
  /** What the turn log keeps (absent when it is off). */
  turnLog?: { keep: number; oldest?: number; newest?: number };
  /** The soul's machine definition (machineJson.ts), as `ensoul export` writes it. */
  machine: unknown;
  /** How often each transition was taken, by `from->to`, over the turns kept. */
  transitions: Record<string, number>;
  /** True when the oldest memories were left out to fit the reply in one message. */
  truncated?: boolean;
}

export interface TurnsRequest {
  soulId: string;
  /** Turns older than this turn number. */
  before?: number;
  /** At most this many (1-100, default 20). */
  limit?: number;
}

/** One committed turn as the debugger shows it (docs/DEBUGGER.md). */
export interface TurnRecord {
  turn: number;
  turnId: string;
  kind: "turn" | "subprocess";
  at: number;
  durationMs?: number;
  perception?: Record<string, unknown>;
  process: { from: string; to: string; path: string[] };
  memory: { before: unknown[] | null; after: unknown[]; truncated?: boolean };
  steps: StepRecord[];
  proposals: ProposalRecord[];
  whispers: { source: string; content: string }[];
  kv: { namespace: string; key: (string | number)[]; value: unknown }[];
  answered: boolean;
  silence?: { reason: "no-speech" | "intercepted"; detail: string };
  state: { soulMemory: Record<string, unknown>; processMemory: Record<string, unknown[]>; schedules: unknown[] };
}

export interface StepRecord {
  step: string;
  model: string;
  prompt: { role: string; content: string; name?: string }[];
  raw?: string;
  value?: unknown;
  tokens?: TokenCount;
  latencyMs: number;
  error?: string;
}

/** A proposal of the turn and what review made of it, as the soul's trace keeps it. */
export type ProposalRecord = ProposalOutcome;

export interface RevertRecord {
  /** The turn that was current when the revert was made (the next turn is this + 1). */
  turn: number;
  /** The turn whose state the soul went back to. */
  toTurn: number;
  by: string;
  at: number;
}

/** A perception whose turn failed: set aside in the soul's inbox with its reason, never answered. */
export interface FailedPerception {
  /** The perception's envelope id. */
  id: string;
  perception: unknown;
  /** Why its turn failed: one line, with where the soul's own code threw (`... at souls/ada/talk.ts:7:17`). */
  error?: string;
  attempts: number;
  /** When it arrived (epoch milliseconds). */
  receivedAt: number;
}

export interface TurnsReply {
  soulId: string;
  node: string;
  turns: TurnRecord[];
  reverts: RevertRecord[];
  failed: FailedPerception[];
  /** The `before` of the next page, absent at the end. */
  next?: number;
}

export interface RevertRequest {
  soulId: string;
  turn: number;
  by?: string;
}

export interface RevertReply {
  soulId: string;
  node: string;
  revert: RevertRecord;
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
