/**
 * Ctrl-C and SIGTERM for the commands that run souls (`chat`, `demo`, `up`, with or without
 * NATS). The first one asks the command to finish what it is doing and stop cleanly: it says
 * so, the running turn ends and is committed, the bus drains, the store closes, and the
 * command exits 0. A second one is for when that takes too long: it exits at once, non-zero
 * (130 after Ctrl-C, 143 after SIGTERM, as a shell reports a process those signals killed).
 * Nothing committed is lost either way: LMDB keeps every committed turn, and a perception
 * whose turn did not finish is redelivered from the inbox at the next start.
 *
 * A terminal in raw mode (readline) reads Ctrl-C as a key, not a signal: the chat hands it
 * to `interrupt`. A reader gone from stdout (brokenPipe.ts) stops the command too, quietly.
 */

export interface Shutdown {
  /** Aborted at the first SIGINT or SIGTERM (or `interrupt`). */
  readonly signal: AbortSignal;
  /** A Ctrl-C read as a key, or another reason to stop; `quiet` prints nothing (nobody reads stdout any more). */
  interrupt(reason: string, opts?: { quiet?: boolean }): void;
  /** Stops listening for signals: the command has ended. */
  dispose(): void;
}

export interface ShutdownOptions {
  /** The command, as its messages name it: `ensoul <command>: SIGINT, ...`. */
  command: string;
  /** What the first signal waits for, e.g. "finishing the turn…". */
  finishing: string;
  /** Where the messages go (default: stderr). */
  note?: (line: string) => void;
}

const FORCED_EXIT_CODE: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

let current: Shutdown | undefined;

/** Listens for SIGINT and SIGTERM until `dispose()`. */
export function watchShutdown(o: ShutdownOptions): Shutdown {
  const controller = new AbortController();
  const note = o.note ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const interrupt = (reason: string, opts: { quiet?: boolean } = {}) => {
    if (!controller.signal.aborted) {
      if (!opts.quiet) note(`ensoul ${o.command}: ${reason}, ${o.finishing} (${reason === "SIGTERM" ? "SIGTERM" : "Ctrl-C"} again to force)`);
      controller.abort(reason);
      return;
    }
    if (opts.quiet) return;
    note(`ensoul ${o.command}: ${reason} again: exiting now, without finishing`);
    process.exit(FORCED_EXIT_CODE[reason] ?? 130);
  };
  const onSignal = (signal: NodeJS.Signals) => interrupt(signal);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const shutdown: Shutdown = {
    signal: controller.signal,
    interrupt,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      if (current === shutdown) current = undefined;
    },
  };
  current = shutdown;
  return shutdown;
}

/** Asks the running command, if one is listening, to stop as its first signal would, without a word. */
export function stopQuietly(reason: string): void {
  current?.interrupt(reason, { quiet: true });
}
