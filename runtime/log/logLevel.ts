/**
 * The levels a log line can have, and the one check of a level someone typed (`--log-level`,
 * `ENSOUL_LOG_LEVEL`), so both fail with the same clear message. They are pino's levels:
 * anything that reads pino's JSON (a log shipper, `jq`) knows them.
 */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

/** Warnings and errors, and the few lines worth seeing on a quiet day; turns are `debug`. */
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

export class LogLevelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LogLevelError";
  }
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/** `source` names where the value came from (`--log-level`, `ENSOUL_LOG_LEVEL`) for the error. */
export function parseLogLevel(value: string, source: string): LogLevel {
  const level = value.trim().toLowerCase();
  if (isLogLevel(level)) return level;
  throw new LogLevelError(`${source} must be one of ${LOG_LEVELS.join(", ")}; got '${value.slice(0, 40)}'`);
}
