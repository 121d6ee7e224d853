import type { ToolBox, ToolOutcome, ToolSpec } from "../../runtime/cognition/index.ts";
import { isInterception, type Proposal, type ReviewContext, type ReviewVerdict } from "../vocabulary/index.ts";
import { errorMessage, ToolError, ToolInputError, ToolOutcomeUnknownError, ToolRejectedError, ToolTimeoutError, withTimeout, type Tool } from "./Tool.ts";
import type { ToolCallLedger } from "./ToolCallLedger.ts";
import type { ToolCallOutcome, ToolEvent } from "./ToolEvent.ts";
import type { ToolRegistry } from "./ToolRegistry.ts";

/** The dispatch action a tool call is proposed as: the bouncer guards it (allowlist) and scans its input for secrets. */
export const TOOL_ACTION = "tool";

/** What a turn gives its tool box. */
export interface ToolTurn {
  soulId: string;
  turnId: string;
  /** One per turn (the turn's draft): numbers the turn's calls across every run that shares it. */
  turnKey: object;
  /** The perception the turn answers, as a proposal's causation. */
  causation?: string;
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
  now(): number;
  /** The soul's review (its gate chain), given `context` as is; throwing blocks the call (fail closed). */
  review(proposal: Proposal, context: ReviewContext): ReviewVerdict | Promise<ReviewVerdict>;
  emit(event: ToolEvent): void;
  ledger: ToolCallLedger;
}

const callCounts = new WeakMap<object, number>();

/**
 * The tools as one turn calls them (the ToolBox cognition sees, and what `useTool` uses).
 * Every call: its input parsed by the tool's schema; proposed to the soul's gate chain as a
 * `dispatch` of action `tool` (never delivered: review only); checked against the ledger
 * (a crashed turn's call is not re-run blindly); run with its timeout; reported as events.
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
    const { turn } = this;
    const tool = this.#tool(name);
    if (turn.signal?.aborted) throw new ToolError(name, `tool ${name} not called: the turn was cancelled`);
    const n = callCounts.get(turn.turnKey) ?? 0;
    callCounts.set(turn.turnKey, n + 1);
    const callId = `${turn.turnId}:tool:${n}`;
    const started = turn.now();
    const base = { soulId: turn.soulId, turnId: turn.turnId, callId, tool: name };
    const result = (outcome: ToolCallOutcome, ok: boolean, detail: { value?: unknown; reason?: string }) =>
      turn.emit({ type: "tool.result", ...base, outcome, ok, ...detail, durationMs: turn.now() - started });

    let input: unknown;
    try {
      input = tool.parse(args);
      input = await this.#review(tool, callId, n, input);
    } catch (err) {
      result(err instanceof ToolRejectedError ? "rejected" : "invalid", false, { reason: errorMessage(err) });
      throw err;
    }
    const record = turn.ledger.get(callId);
    if (record?.state === "done") {
      result("replayed", record.ok, record.ok ? { value: record.value } : { reason: String(record.value) });
      if (record.ok) return record.value;
      throw new ToolError(name, String(record.value));
    }
    if (record?.state === "started" && !tool.idempotent) {
      const unknown = new ToolOutcomeUnknownError(name, callId);
      turn.emit({ type: "tool.unknown", ...base, reason: unknown.message });
      throw unknown;
    }
    turn.emit({ type: "tool.call", ...base, input, remote: tool.remote === true });
    const durable = !tool.idempotent;
    if (durable) await turn.ledger.put(callId, { state: "started", tool: name, ts: started });
    try {
      const value = (await withTimeout(name, tool.timeoutMs, turn.signal, (signal) => tool.run(input, { callId, soulId: turn.soulId, signal }))) ?? null;
      if (durable) await turn.ledger.put(callId, { state: "done", tool: name, ts: turn.now(), ok: true, value });
      result("ok", true, { value });
      return value;
    } catch (err) {
      const reason = errorMessage(err);
      if (durable) await turn.ledger.put(callId, { state: "done", tool: name, ts: turn.now(), ok: false, value: reason });
      result(err instanceof ToolTimeoutError ? "timeout" : err instanceof ToolInputError ? "invalid" : "error", false, { reason });
      throw err;
    }
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
  async #review(tool: Tool, callId: string, n: number, input: unknown): Promise<unknown> {
    const { turn } = this;
    const proposal: Proposal = {
      id: callId,
      soulId: turn.soulId,
      turnId: turn.turnId,
      seq: n,
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

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}
