/**
 * `ensoul memory claudius | head`: once `head` has its lines it exits, and every later write
 * to the pipe fails with EPIPE. Node ignores SIGPIPE and reports it as an error event on
 * process.stdout, which, unhandled, ends the command with a stack trace. A reader that has
 * gone away is not an error: output to it stops, a command that runs souls stops as a first
 * Ctrl-C would (quietly: nobody reads its messages), and the exit is 0.
 */
import { stopQuietly } from "./shutdown.ts";

/** Installs the handlers on stdout and stderr, for every command. */
export function quietOnBrokenPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      // Anything but a vanished reader is a real failure: rethrown as it would have been.
      if (err.code !== "EPIPE" && err.code !== "ERR_STREAM_DESTROYED") throw err;
      stopQuietly("EPIPE");
    });
  }
}
