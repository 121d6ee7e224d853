/**
 * The log: the runtime's one way to print (pino; levels; JSON lines or readable lines) and the
 * credential shapes every printed line is redacted by. It is the lowest layer: it imports
 * nothing of ensoul, and everything that prints, the bus first, goes through it.
 */
export { componentLogger, configureLogging, createLogger, lineLogger, rootLogger, type Logger, type LoggingOptions } from "./logger.ts";
export { DEFAULT_LOG_LEVEL, isLogLevel, LOG_LEVELS, LogLevelError, parseLogLevel, type LogLevel } from "./logLevel.ts";
export { logSink, type LogFormat, type LogTarget } from "./logSink.ts";
export { readableLine } from "./readableLine.ts";
export { redactSecrets, REDACTED, SECRET_PATTERNS, type SecretPattern } from "./secrets.ts";
