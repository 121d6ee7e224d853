/**
 * What happened in one turn, kept with its commit in the turn log for the debugger's
 * timeline: the perception, the processes it ran through, each cognitive step (prompt, raw
 * answer, parsed value, model, tokens, latency), the proposals and what review made of them,
 * and the whispers it recalled.
 *
 * Why a step's memory is kept as runs of the turn's starting memory: a prompt is mostly the
 * conversation the soul already had. The turn log keeps that memory anyway (the entry before
 * this one), so a step keeps `[start, length]` runs into it, matched by identity, and only the
 * memories the turn added. The reader rebuilds the prompt from both (node soulHistory.ts).
 */
import type { StepTrace } from "../../runtime/cognition/index.ts";
import type { Perception } from "../vocabulary/index.ts";

/** A step's memory: runs of the turn's starting memory, and memories of its own. */
export type MemorySegment = [start: number, length: number] | { memory: unknown };

export interface StepRecordStored {
  step: string;
  model: string;
  memory: MemorySegment[];
  /** The prompt's messages after the memory's (the step's command). */
  command: { role: string; content: string; name?: string }[];
  raw?: string;
  value?: unknown;
  tokens: { input: number; output: number };
  latencyMs: number;
  error?: string;
}

export interface ProposalOutcome {
  id: string;
  kind: string;
  action?: string;
  /** Absent for an intercepted proposal: what a gate stopped is not shown anywhere. */
  content?: string;
  verdict: "passed" | "transformed" | "intercepted";
  reason?: string;
}

/** The trace as stored (plain data). */
export interface StoredTurnTrace {
  perception: { id: string; action: string; content: string; name: string; internal?: boolean };
  from: string;
  path: string[];
  startedAt: number;
  durationMs: number;
  steps: StepRecordStored[];
  proposals: ProposalOutcome[];
  whispers: { source: string; content: string }[];
}

/** Longest raw answer kept; a step's raw output past it is cut, with a note. */
const MAX_RAW = 32_000;

export class TurnTrace {
  readonly #base: readonly unknown[];
  #index: Map<unknown, number> | undefined;
  readonly #perception: Perception;
  readonly #from: string;
  readonly #startedAt: number;
  readonly path: string[] = [];
  readonly steps: StepRecordStored[] = [];
  readonly proposals: ProposalOutcome[] = [];
  readonly whispers: { source: string; content: string }[] = [];

  constructor(base: readonly unknown[], perception: Perception, from: string, startedAt: number) {
    this.#base = base;
    this.#perception = perception;
    this.#from = from;
    this.#startedAt = startedAt;
  }

  /** The cognition context's `onStep` for this turn. */
  readonly step = (trace: StepTrace): void => {
    const memory = this.#segments(trace.memories);
    const command = trace.messages.slice(trace.memories.length).map((m) => ({ role: m.role, content: m.content, ...(m.name !== undefined ? { name: m.name } : {}) }));
    const raw = trace.raw !== undefined && trace.raw.length > MAX_RAW ? `${trace.raw.slice(0, MAX_RAW)}… [${trace.raw.length - MAX_RAW} more characters]` : trace.raw;
    this.steps.push({
      step: trace.step,
      model: trace.model,
      memory,
      command,
      ...(raw !== undefined ? { raw } : {}),
      ...(trace.value !== undefined && typeof trace.value !== "function" ? { value: plain(trace.value) } : {}),
      tokens: { input: trace.usage.inputTokens, output: trace.usage.outputTokens },
      latencyMs: trace.latencyMs,
      ...(trace.error !== undefined ? { error: trace.error } : {}),
    });
  };

  toStored(endedAt: number): StoredTurnTrace {
    const { id, action, content, name, internal } = this.#perception;
    return {
      perception: { id, action, content, name, ...(internal === true ? { internal } : {}) },
      from: this.#from,
      path: this.path,
      startedAt: this.#startedAt,
      durationMs: endedAt - this.#startedAt,
      steps: this.steps,
      proposals: this.proposals,
      whispers: this.whispers,
    };
  }

  /** The memories as runs into the turn's starting memory where they are the same objects. */
  #segments(memories: readonly unknown[]): MemorySegment[] {
    this.#index ??= new Map(this.#base.map((m, i) => [m, i]));
    const out: MemorySegment[] = [];
    for (const memory of memories) {
      const at = this.#index.get(memory);
      const last = out[out.length - 1];
      if (at === undefined) out.push({ memory });
      else if (Array.isArray(last) && last[0] + last[1] === at) last[1]++;
      else out.push([at, 1]);
    }
    return out;
  }
}

/** A value as JSON would keep it (a parsed value may hold a Date, a Map, a class instance). */
function plain(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value) ?? "null");
  } catch {
    return String(value);
  }
}
