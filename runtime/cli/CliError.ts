/**
 * A failure the user can fix, reported as one line without a stack trace, and `detail` below it
 * when there is more to show (a syntax error's source line, as esbuild reports it).
 */
export class CliError extends Error {
  readonly exitCode: number;
  readonly detail: string | undefined;
  constructor(message: string, exitCode = 2, detail?: string) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
    this.detail = detail;
  }

  /** The same failure for the CLI: its message, and its detail when it has one (SoulModuleError, ConfigError). */
  static of(err: Error & { detail?: string | undefined }, exitCode = 2): CliError {
    return new CliError(err.message, exitCode, err.detail);
  }
}
