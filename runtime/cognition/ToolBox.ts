/**
 * The tools a turn may call, as cognition sees them: what to tell a model about each
 * (name, description, JSON schema of its input) and a way to call one. The soul runtime puts
 * one in the turn's cognition context (`CognitionContext.tools`); every call through it is a
 * proposal the soul's gate chain verifies before the tool runs, and an event on the soul's
 * events subject (actors/tool). Cognition only asks: the `toolUse` step offers the specs to
 * the model and calls what the model chose.
 */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the tool's input (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** What a tool call came to, as a model is told it. */
export interface ToolOutcome {
  ok: boolean;
  /** The tool's result (ok), or why the call did not happen or failed (not ok): a gate's reason, a timeout, an error. */
  value: unknown;
}

export interface ToolBox {
  /** The specs of the tools named (all the turn may call, when none are named); an unknown name throws. */
  specs(names?: readonly string[]): ToolSpec[];
  /** Calls one tool; never throws for a refused or failed call: that is an outcome the model is told. */
  call(name: string, input: unknown): Promise<ToolOutcome>;
}
