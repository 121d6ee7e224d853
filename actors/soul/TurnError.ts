/**
 * A turn that cannot go on as written: a process missing from the blueprint, a return value
 * of the wrong shape, a transition the soul cannot take. The committed state stays as it was.
 *
 * Its own file because the turn runner, the subprocess phase and the reading of process
 * results all throw it.
 */
export class TurnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TurnError";
  }
}
