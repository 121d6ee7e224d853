/**
 * One error type for every provider failure, classified so the cascade and the retry
 * policy can decide without knowing which SDK produced it.
 */
export type ProviderFailureKind =
  | "rate_limit" // 429
  | "server" // 5xx, overloaded
  | "timeout" // request deadline passed
  | "stream" // connection dropped or stream broke mid-answer
  | "auth" // 401/403: retrying will not help
  | "bad_request" // 4xx other than 429: retrying will not help
  | "aborted" // the caller's signal fired
  | "format"; // the answer ignored the requested format

export class ProviderError extends Error {
  readonly provider: string;
  readonly kind: ProviderFailureKind;
  readonly status?: number;
  /** From a `retry-after` header, in milliseconds. */
  readonly retryAfterMs?: number;

  constructor(opts: {
    provider: string;
    kind: ProviderFailureKind;
    message: string;
    status?: number;
    retryAfterMs?: number;
    cause?: unknown;
  }) {
    super(`${opts.provider}: ${opts.message}`, { cause: opts.cause });
    this.name = "ProviderError";
    this.provider = opts.provider;
    this.kind = opts.kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }

  /** Failures another attempt (or another provider) may get past. */
  get retryable(): boolean {
    return this.kind === "rate_limit" || this.kind === "server" || this.kind === "timeout" || this.kind === "stream";
  }
}

export function isProviderError(e: unknown): e is ProviderError {
  return e instanceof ProviderError;
}
