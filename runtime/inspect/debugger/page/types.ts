/** The debugger API's JSON, as docs/DEBUGGER.md gives it (the page reads; it never trusts a field to be there). */

export interface TokenCount { input: number; output: number }

export interface FleetEntry {
  id: string;
  name?: string;
  node: string;
  process: string;
  status: string;
  pending: number;
  turns: number;
  lastTurnAt?: number;
  turnsPerMinute: number;
  tokens: TokenCount;
}

export interface NodeEntry { node: string; state: string; lastSeen?: number; bus?: string }

export interface FleetReply { cluster: string; nodes: NodeEntry[]; souls: FleetEntry[] }

export interface Memory { id?: string; role: string; content: unknown; region?: string; name?: string }

export interface UserModelVersion { version: number; model?: unknown; note?: string; at?: number; [field: string]: unknown }

export interface Schedule { id: string; at: number; process?: string; perception?: unknown }

export interface SoulDetail {
  soul: FleetEntry;
  workingMemory: { soulName?: string; memories?: Memory[]; regionOrder?: string[] } | null;
  soulMemory: Record<string, unknown>;
  processMemory: Record<string, unknown[]>;
  schedules: Schedule[];
  userModels: { userId: string; versions: UserModelVersion[] }[];
  turnLog?: { keep: number; oldest?: number; newest?: number };
  machine: unknown;
  transitions: Record<string, number>;
  truncated?: boolean;
}

export interface Step {
  step: string;
  model: string;
  prompt: { role: string; content: string; name?: string }[];
  raw?: string;
  value?: unknown;
  tokens?: TokenCount;
  latencyMs: number;
  error?: string;
}

export interface Proposal {
  id: string;
  kind: string;
  action?: string;
  content?: string;
  verdict: "passed" | "transformed" | "intercepted";
  reason?: string;
}

export interface Turn {
  turn: number;
  turnId: string;
  kind: "turn" | "subprocess";
  at: number;
  durationMs?: number;
  perception?: Record<string, unknown>;
  process: { from: string; to: string; path: string[] };
  memory: { before: Memory[] | null; after: Memory[]; truncated?: boolean };
  steps: Step[];
  proposals: Proposal[];
  whispers: { source: string; content: string }[];
  kv: { namespace: string; key: (string | number)[]; value: unknown }[];
  answered: boolean;
  silence?: { reason: string; detail: string };
  state?: { soulMemory: Record<string, unknown>; processMemory: Record<string, unknown[]>; schedules: unknown[] };
}

export interface Revert { turn: number; toTurn: number; by: string; at: number }

export interface FailedPerception { perception: unknown; error?: string; attempts: number }

export interface TurnsReply {
  soulId: string;
  turns: Turn[];
  reverts: Revert[];
  failed: FailedPerception[];
  next?: number;
}

/** One message of `GET /api/events`. */
export interface LiveEvent { type: string; data: unknown }
