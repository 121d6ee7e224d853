/**
 * Why a gate could not decide. The chain turns each into a blocking decision (gates fail
 * closed); the class only picks the decision kind that gets recorded: `timeout` for a
 * deadline, `error` for the rest.
 */
export class GateError extends Error {
  readonly gate: string;
  constructor(gate: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.gate = gate;
  }
}

/** The gate did not answer within its deadline (locally, or a skill-gate actor over the bus). */
export class GateTimeoutError extends GateError {
  readonly timeoutMs: number;
  constructor(gate: string, timeoutMs: number, message = `gate ${gate} timed out after ${timeoutMs} ms`) {
    super(gate, message);
    this.timeoutMs = timeoutMs;
  }
}

/** The gate answered something that is neither a proposal nor an interception. */
export class MalformedVerdictError extends GateError {}

export function errorMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split("\n")[0].slice(0, 500);
}
