/**
 * The runtime's logger: pino, with levels, JSON lines when stderr is not a terminal and
 * readable lines when it is (logSink.ts). One root logger per process, made on first use
 * from `ENSOUL_LOG_LEVEL` and `ENSOUL_LOG_FORMAT`, or set by the CLI from `--log-level`
 * (`configureLogging`). Parts of the runtime log through children of it that name
 * themselves (`{ component: "bus" }`, `{ node: "local" }`), and a soul's lines carry
 * `soul` and `trace` (the turn id), so one turn's lines can be found together.
 */
import { createRequire } from "node:module";
import type { Logger } from "pino";
import { logSink, type LogFormat, type LogTarget } from "./logSink.ts";
import { DEFAULT_LOG_LEVEL, isLogLevel, parseLogLevel, type LogLevel } from "./logLevel.ts";

export type { Logger } from "pino";

export interface LoggingOptions {
  /** Default: `ENSOUL_LOG_LEVEL`, else `info`. */
  level?: LogLevel;
  /** `auto` (the default, or `ENSOUL_LOG_FORMAT`): readable on a terminal, JSON lines otherwise. */
  format?: LogFormat | "auto";
  /** Default: process.stderr, written synchronously so no line is lost when the process exits. */
  target?: LogTarget;
  env?: Readonly<Record<string, string | undefined>>;
}

let root: Logger | undefined;

/**
 * pino is loaded on the first logger, not with this module: the bus and the CLI import the
 * log, and `ensoul --help` or `ensoul status` should not pay for loading a logger they never use.
 */
let loaded: typeof import("pino").pino | undefined;
const pinoModule = () => (loaded ??= (createRequire(import.meta.url)("pino") as typeof import("pino")).pino);

/** A logger of its own (tests, an embedding application); the runtime uses the root one. */
export function createLogger(options: LoggingOptions = {}): Logger {
  const env = options.env ?? process.env;
  const target = options.target ?? process.stderr;
  const envLevel = env.ENSOUL_LOG_LEVEL?.trim().toLowerCase();
  const level = options.level ?? (isLogLevel(envLevel) ? envLevel : DEFAULT_LOG_LEVEL);
  const pino = pinoModule();
  const logger = pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names, not pino's numbers: a person grepping JSON lines reads `"level":"warn"`.
      formatters: { level: (label) => ({ level: label }) },
    },
    logSink(target, formatOf(options.format, env, target)),
  );
  // A bad value in the environment must not stop a node; it is said once, then ignored.
  if (options.level === undefined && envLevel && !isLogLevel(envLevel)) {
    try {
      parseLogLevel(envLevel, "ENSOUL_LOG_LEVEL");
    } catch (err) {
      logger.warn(`${(err as Error).message}; logging at ${DEFAULT_LOG_LEVEL}`);
    }
  }
  return logger;
}

function formatOf(format: LoggingOptions["format"], env: Readonly<Record<string, string | undefined>>, target: LogTarget): LogFormat {
  const chosen = format ?? (env.ENSOUL_LOG_FORMAT === "json" || env.ENSOUL_LOG_FORMAT === "readable" ? env.ENSOUL_LOG_FORMAT : "auto");
  if (chosen !== "auto") return chosen;
  return target.isTTY === true ? "readable" : "json";
}

/**
 * A logger that hands each line's message to a function: for callers that take lines rather
 * than a logger (`startNode({ log })` in tests and embedding code). Below `level` (default
 * `info`) nothing is handed over, so per-turn `debug` lines never reach them.
 */
export function lineLogger(take: (line: string) => void, level: LogLevel = DEFAULT_LOG_LEVEL): Logger {
  return createLogger({
    level,
    format: "json",
    target: { write: (json) => take(String((JSON.parse(json) as { msg?: unknown }).msg ?? "")) },
  });
}

/** Replaces the root logger (the CLI, once, before a command runs). */
export function configureLogging(options: LoggingOptions = {}): Logger {
  root = createLogger(options);
  return root;
}

export function rootLogger(): Logger {
  root ??= createLogger();
  return root;
}

/** The root logger's child for a part of the runtime: its lines read `[ensoul <component>] ...`. */
export function componentLogger(component: string): Logger {
  return rootLogger().child({ component });
}
