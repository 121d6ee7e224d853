/**
 * The last line of a process that runs souls (`up`, `demo`, `chat`): an exception nothing
 * caught, or a rejection nobody handled. Each is logged with its context (the actor whose work
 * it was, how it failed, the error and where it was thrown). One that happened in an actor's
 * work (runtime/node actorScope.ts: a soul's turn, its timers, what they started) is handed to
 * that actor's supervisor, which stops and restarts the actor: the node keeps serving its
 * other souls. Only what no actor owns ends the process (exit code 70), since then nothing
 * says which part of it is left broken; LMDB keeps every committed turn, and a perception in
 * flight is delivered again at the next start.
 */
import { componentLogger, redactSecrets } from "../log/index.ts";
import { currentActor } from "../node/index.ts";

/** EX_SOFTWARE (sysexits.h): an internal error. */
export const UNATTRIBUTED_EXIT_CODE = 70;

export interface ProcessGuardOptions {
  /** Where the lines go (default: the runtime's log, component `process`). */
  log?: (line: string) => void;
  /** Default: process.exit. */
  exit?: (code: number) => void;
}

/** The error and the first frames of its stack, on one line, without credentials. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return redactSecrets(String(err));
  const frames = (err.stack ?? "").split("\n").slice(1, 4).map((l) => l.trim()).join(" ");
  return redactSecrets(`${err.name}: ${err.message}${frames ? ` (${frames})` : ""}`);
}

/** Installs the handlers; the returned function removes them. */
export function guardProcess(options: ProcessGuardOptions = {}): () => void {
  const logger = options.log ? undefined : componentLogger("process");
  const log = options.log ?? ((line: string) => logger?.error(line));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const handle = (err: unknown, how: "uncaught exception" | "unhandled rejection") => {
    const actor = currentActor();
    if (actor) {
      log(`${how} in ${actor.name}: ${describe(err)}; ${actor.name} is stopped and restarted, the node keeps serving`);
      actor.failed(err, how);
      return;
    }
    log(`${how} that no actor owns: ${describe(err)}; the process exits (${UNATTRIBUTED_EXIT_CODE})`);
    exit(UNATTRIBUTED_EXIT_CODE);
  };
  const onException = (err: unknown) => handle(err, "uncaught exception");
  const onRejection = (reason: unknown) => handle(reason, "unhandled rejection");
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  return () => {
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  };
}
