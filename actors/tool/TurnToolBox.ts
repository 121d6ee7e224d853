import type { ToolBox, ToolOutcome, ToolSpec } from "../../runtime/cognition/index.ts";
import { isInterception, type Proposal, type ReviewContext, type ReviewVerdict } from "../vocabulary/index.ts";
import { portableValueProblem } from "../../runtime/bus/index.ts";
import { atFaultPoint } from "../../runtime/faults/index.ts";
import { errorMessage, ToolError, ToolInputError, ToolOutcomeUnknownError, ToolRejectedError, ToolTimeoutError, withTimeout, type Tool } from "./Tool.ts";
import { recordedCall, turnNumberOf, type RecordedCall, type ToolCallLedger, type ToolCallRecord } from "./ToolCallLedger.ts";
import { inputDigest, toolCallId, type ToolCallPhase } from "./toolCallId.ts";
import type { ToolCallOutcome, ToolEvent } from "./ToolEvent.ts";
import type { ToolRegistry } from "./ToolRegistry.ts";

/** The dispatch action a tool call is proposed as: the bouncer guards it (allowlist) and scans its input for secrets. */
export const TOOL_ACTION = "tool";

/** What a turn gives its tool box. */
export interface ToolTurn {
  soulId: string;
  turnId: string;
  /**
   * One per phase (the turn's draft; for subprocesses, their phase's, which every fork shares):
   * the calls of a phase are counted together, so two identical calls in it are two calls.
   */
  turnKey: object;
  /** The perception the turn answers: the proposal's causation and part of every call's id. */
  causation?: string;
  /** The turn (default) or the subprocesses after it: the same call in each is a different call. */
  phase?: ToolCallPhase;
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
  now(): number;
  /** The soul's review (its gate chain), given `context` as is; throwing blocks the call (fail closed). */
  review(proposal: Proposal, context: ReviewContext): ReviewVerdict | Promise<ReviewVerdict>;
  emit(event: ToolEvent): void;
  ledger: ToolCallLedger;
}

/** A phase's calls so far: in all (a proposal's seq), and per tool and input (a call's repeat). */
interface PhaseCalls {
  made: number;
  repeats: Map<string, number>;
}

const phaseCalls = new WeakMap<object, PhaseCalls>();

/** One call as the box handles it: its id, its position in the phase, and what its events share. */
interface Call {
  tool: Tool;
  callId: string;
  seq: number;
  base: { soulId: string; turnId: string; callId: string; tool: string };
  started: number;
  result(outcome: ToolCallOutcome, ok: boolean, detail: { value?: unknown; reason?: string }): void;
}

/**
 * The tools as one turn calls them (the ToolBox cognition sees, and what `useTool` uses).
 * Every call: its input parsed by the tool's schema; proposed to the soul's gate chain as a
 * `dispatch` of action `tool` (never delivered: review only); checked against the ledger
 * (a call of a turn run again is answered by its own record, never run twice); run with its
 * timeout; reported as events.
 */
export class TurnToolBox implements ToolBox {
  constructor(
    readonly registry: ToolRegistry,
    readonly turn: ToolTurn,
  ) {}

  specs(names?: readonly string[]): ToolSpec[] {
    return (names ?? this.registry.names()).map((name) => {
      const tool = this.#tool(name);
      return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
    });
  }

  async call(name: string, input: unknown): Promise<ToolOutcome> {
    try {
      return { ok: true, value: await this.invoke(name, input) };
    } catch (err) {
      return { ok: false, value: errorMessage(err) };
    }
  }

  /** Calls a tool: its result, or ToolRejectedError, ToolInputError, ToolTimeoutError, ToolOutcomeUnknownError, ToolError. */
  async invoke(name: string, args: unknown): Promise<unknown> {
    const tool = this.#tool(name);
    if (this.turn.signal?.aborted) throw new ToolError(name, `tool ${name} not called: the turn was cancelled`);
    // Known by the input its schema reads (keys it drops or reorders make no other call); by what was given when that does not parse.
    const parsed = parseOf(tool, args);
    const call = this.#identify(tool, parsed.ok ? parsed.input : args);
    let input: unknown;
    try {
      if (!parsed.ok) throw parsed.error;
      input = await this.#review(call, parsed.input);
    } catch (err) {
      call.result(err instanceof ToolRejectedError ? "rejected" : "invalid", false, { reason: errorMessage(err) });
      throw err;
    }
    if (tool.idempotent) return this.#run(call, input);
    const digest = inputDigest(input);
    const recorded = recordedCall(this.turn.ledger.get(call.callId), name, digest);
    if (recorded.kind === "new") return this.#runRecorded(call, input, digest);
    return this.#answerFromRecord(call, recorded);
  }

  /** The call's id (toolCallId.ts) and its place among the phase's calls. */
  #identify(tool: Tool, proposed: unknown): Call {
    const { turn } = this;
    let calls = phaseCalls.get(turn.turnKey);
    if (!calls) phaseCalls.set(turn.turnKey, (calls = { made: 0, repeats: new Map() }));
    const digest = inputDigest(proposed);
    const repeatKey = `${tool.name}\n${digest}`;
    const occurrence = calls.repeats.get(repeatKey) ?? 0;
    calls.repeats.set(repeatKey, occurrence + 1);
    const seq = calls.made++;
    const perceptionId = turn.causation ?? turn.turnId;
    const callId = toolCallId({ soulId: turn.soulId, perceptionId, phase: turn.phase ?? "turn", tool: tool.name, input: digest, occurrence });
    const base = { soulId: turn.soulId, turnId: turn.turnId, callId, tool: tool.name };
    const started = turn.now();
    const result: Call["result"] = (outcome, ok, detail) => turn.emit({ type: "tool.result", ...base, outcome, ok, ...sendable(detail), durationMs: turn.now() - started });
    return { tool, callId, seq, base, started, result };
  }

  /** A call of a turn run again, answered by its record: its outcome, or why it does not run. */
  #answerFromRecord(call: Call, recorded: Exclude<RecordedCall, { kind: "new" }>): unknown {
    const name = call.tool.name;
    if (recorded.kind === "replay") {
      call.result("replayed", recorded.ok, recorded.ok ? { value: recorded.value } : { reason: String(recorded.value) });
      if (recorded.ok) return recorded.value;
      throw new ToolError(name, String(recorded.value));
    }
    if (recorded.kind === "unknown") {
      const unknown = new ToolOutcomeUnknownError(name, call.callId);
      this.turn.emit({ type: "tool.unknown", ...call.base, reason: unknown.message });
      throw unknown;
    }
    const conflict = new ToolError(name, `the call ${call.callId} of tool ${name} ${recorded.reason}: neither replayed nor run again (the tool is not idempotent)`);
    call.result("error", false, { reason: conflict.message });
    throw conflict;
  }

  /** A non-idempotent call: recorded as started before it runs, and with its outcome after. */
  async #runRecorded(call: Call, input: unknown, digest: string): Promise<unknown> {
    const { turn } = this;
    const name = call.tool.name;
    const turnNumber = turnNumberOf(turn.turnId);
    const record = { tool: name, input: digest, ...(turnNumber !== undefined ? { turn: turnNumber } : {}) };
    try {
      await this.#record(call, { state: "started", ...record, ts: call.started });
    } catch (err) {
      // Not recorded, not run: a run nobody could find again after a crash might be run twice.
      const refused = new ToolError(name, `tool ${name} not called: its call could not be recorded first (${errorMessage(err)})`);
      call.result("error", false, { reason: refused.message });
      throw refused;
    }
    const recordDone = (ok: boolean, value: unknown) => this.#record(call, { state: "done", ...record, ts: turn.now(), ok, value });
    return this.#run(call, input, recordDone);
  }

  /**
   * Runs the tool with its timeout. `recordDone`, for a recorded call, keeps its outcome; when
   * that fails the call still ends as it did (the tool ran: saying otherwise would invite a
   * second run), and a re-run of the turn finds it started, so unknown.
   */
  async #run(call: Call, input: unknown, recordDone?: (ok: boolean, value: unknown) => Promise<void>): Promise<unknown> {
    const { turn } = this;
    const { tool, callId } = call;
    const unrecorded = async (ok: boolean, value: unknown): Promise<string | undefined> => {
      if (!recordDone) return undefined;
      try {
        await recordDone(ok, value);
        return undefined;
      } catch (err) {
        return `its outcome could not be recorded (${errorMessage(err)}): if the turn runs again, the call is reported unknown`;
      }
    };
    turn.emit({ type: "tool.call", ...call.base, input, remote: tool.remote === true });
    const detail = { soulId: turn.soulId, callId, tool: tool.name, remote: tool.remote === true };
    try {
      const ran = await withTimeout(tool.name, tool.timeoutMs, turn.signal, (signal) => atFaultPoint("tool.call", () => tool.run(input, { callId, soulId: turn.soulId, signal }), detail));
      const value = ran ?? null;
      const note = await unrecorded(true, value);
      call.result("ok", true, { value, ...(note !== undefined ? { reason: note } : {}) });
      return value;
    } catch (err) {
      const reason = errorMessage(err);
      await unrecorded(false, reason);
      call.result(err instanceof ToolTimeoutError ? "timeout" : err instanceof ToolInputError ? "invalid" : "error", false, { reason });
      throw err;
    }
  }

  #record(call: Call, record: ToolCallRecord): Promise<void> {
    const detail = { soulId: this.turn.soulId, callId: call.callId, tool: call.tool.name, state: record.state };
    return atFaultPoint("tool.record", () => this.turn.ledger.put(call.callId, record), detail);
  }

  #tool(name: string): Tool {
    const tool = this.registry.get(name);
    if (!tool) {
      const known = this.registry.names();
      throw new ToolError(name, `no tool named ${JSON.stringify(name)}: this soul has ${known.length ? known.join(", ") : "no tools"}`);
    }
    return tool;
  }

  /** The call as a proposal through the soul's gates; a gate may change the input (re-parsed), never the tool. */
  async #review(call: Call, input: unknown): Promise<unknown> {
    const { turn } = this;
    const { tool, callId } = call;
    const proposal: Proposal = {
      id: callId,
      soulId: turn.soulId,
      turnId: turn.turnId,
      seq: call.seq,
      kind: "dispatch",
      action: TOOL_ACTION,
      content: safeJson(input),
      data: { tool: tool.name, input, callId },
      ts: turn.now(),
      ...(turn.causation !== undefined ? { causation: turn.causation } : {}),
      ...(turn.meta !== undefined ? { meta: turn.meta } : {}),
    };
    let verdict: ReviewVerdict;
    try {
      // Not holdable: the turn waits for this call's result now, and the call is never
      // delivered, so a hold must refuse it rather than queue it for a human's approval.
      verdict = await turn.review(proposal, { holdable: false });
    } catch (err) {
      // Gates fail closed: a review that cannot decide blocks the call.
      throw new ToolRejectedError(tool.name, undefined, `review failed: ${errorMessage(err)}`);
    }
    if (isInterception(verdict)) throw new ToolRejectedError(tool.name, undefined, verdict.reason);
    if (verdict.action !== TOOL_ACTION || verdict.data?.tool !== tool.name) {
      throw new ToolRejectedError(tool.name, undefined, "a gate changed which tool is called: refused");
    }
    return verdict.data?.input === input ? input : tool.parse(verdict.data?.input);
  }
}

function parseOf(tool: Tool, args: unknown): { ok: true; input: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, input: tool.parse(args) };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * A result's value as the events subject can carry it: a local tool may return what §4 has no
 * form for (a Date, a Map); the process gets it as it is, the event goes without it and says
 * why, rather than not at all.
 */
function sendable(detail: { value?: unknown; reason?: string }): { value?: unknown; reason?: string } {
  if (!("value" in detail)) return detail;
  const problem = portableValueProblem(detail.value, "value");
  if (problem === null) return detail;
  const why = `the value is not sent with this event: ${problem}`;
  return { reason: detail.reason === undefined ? why : `${detail.reason}; ${why}` };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}
