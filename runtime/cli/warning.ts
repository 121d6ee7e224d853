/** A warning that does not stop the command: one line on stderr, after the `ensoul:` of the errors. */
export function warn(message: string): void {
  process.stderr.write(`ensoul: warning: ${message}\n`);
}
