import { z } from "zod";
import { assertName } from "../../runtime/bus/index.ts";

/**
 * A tool: something a soul may do to the world and get an answer from (a clock, a notes
 * file, a search). A call is a proposal: the soul's gate chain sees it before it runs
 * (TurnToolBox.ts), and it runs here in the process or in a tool actor (toolActor.ts).
 */

export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;

/** What a running tool knows of the call. */
export interface ToolRunContext {
  /**
   * Names this call for ever (toolCallId.ts): the same when the perception's turn runs again and
   * makes the same call (in any order), never another call's. So a tool may dedupe on it.
   */
  callId: string;
  soulId: string;
  /** Aborted when the call times out: a tool should stop its work. */
  signal: AbortSignal;
}

export interface ToolDefinition<I = unknown, O = unknown> {
  /** A name token (`[A-Za-z0-9_-]`): it is a subject token of the tool's actor. */
  name: string;
  description: string;
  /** The input's schema; a call whose input does not parse is refused before the gates see it. */
  input: z.ZodType<I>;
  run(input: I, ctx: ToolRunContext): O | Promise<O>;
  /**
   * Safe to run twice with the same input (default false). A call that was under way when
   * its turn crashed is run again only if its tool is idempotent; otherwise its outcome is
   * reported as unknown.
   */
  idempotent?: boolean;
  /** Default 10 s. */
  timeoutMs?: number;
}

/** A tool ready to call: its input schema also as JSON schema, for models and remote callers. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly idempotent: boolean;
  readonly timeoutMs: number;
  /** Served by a tool actor (remoteTool.ts), for events and debuggers. */
  readonly remote?: boolean;
  /** Parses the input; throws ToolInputError with zod's account of what is wrong. */
  parse(input: unknown): unknown;
  run(input: unknown, ctx: ToolRunContext): Promise<unknown>;
}

export function defineTool<I, O>(definition: ToolDefinition<I, O>): Tool {
  const name = assertName("tool", definition.name);
  const timeoutMs = definition.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new RangeError(`tool ${name}: timeoutMs must be positive, got ${timeoutMs}`);
  const schema = definition.input;
  return {
    name,
    description: definition.description,
    inputSchema: z.toJSONSchema(schema, { unrepresentable: "any" }) as Record<string, unknown>,
    idempotent: definition.idempotent ?? false,
    timeoutMs,
    parse(input) {
      const parsed = schema.safeParse(input);
      if (!parsed.success) throw new ToolInputError(name, z.prettifyError(parsed.error));
      return parsed.data;
    },
    async run(input, ctx) {
      return definition.run(input as I, ctx);
    },
  };
}

export class ToolInputError extends Error {
  constructor(readonly tool: string, detail: string) {
    super(`invalid input for tool ${tool}: ${detail}`);
    this.name = "ToolInputError";
  }
}

/** A gate stopped the call: `reason` is the gate's, so the caller can try something else. */
export class ToolRejectedError extends Error {
  constructor(readonly tool: string, readonly gate: string | undefined, readonly reason: string) {
    super(`call of tool ${tool} was rejected${gate ? ` by the ${gate} gate` : ""}: ${reason}`);
    this.name = "ToolRejectedError";
  }
}

export class ToolTimeoutError extends Error {
  constructor(readonly tool: string, readonly timeoutMs: number) {
    super(`tool ${tool} did not answer within ${timeoutMs} ms`);
    this.name = "ToolTimeoutError";
  }
}

/** A non-idempotent call was under way when its turn crashed: whether it ran is not known, so it is not run again. */
export class ToolOutcomeUnknownError extends Error {
  constructor(readonly tool: string, readonly callId: string) {
    super(`unknown: the call ${callId} of tool ${tool} was made before a crash and its result is not known (not run again: the tool is not idempotent)`);
    this.name = "ToolOutcomeUnknownError";
  }
}

/** The tool ran and failed, or no tool by that name can be reached. */
export class ToolError extends Error {
  constructor(readonly tool: string, message: string) {
    super(message);
    this.name = "ToolError";
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `work` with a deadline; the signal given to it aborts when the deadline passes. */
export async function withTimeout<T>(tool: string, timeoutMs: number, outer: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort = () => {};
  // Ends at the deadline, or at once when the turn is cancelled: nobody waits for the result then.
  const deadline = new Promise<never>((_, reject) => {
    onAbort = () => {
      controller.abort(outer?.reason);
      reject(new ToolError(tool, `tool ${tool} was abandoned: the turn was cancelled`));
    };
    if (outer?.aborted) return onAbort();
    outer?.addEventListener("abort", onAbort, { once: true });
    timer = setTimeout(() => {
      controller.abort(new ToolTimeoutError(tool, timeoutMs));
      reject(new ToolTimeoutError(tool, timeoutMs));
    }, timeoutMs);
  });
  try {
    return await Promise.race([work(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  }
}
