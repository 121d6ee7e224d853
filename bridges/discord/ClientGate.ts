/**
 * The bridge's REST calls to Discord, cut off when the bridge stops.
 *
 * A call still running when the bridge stops has a moment to finish (a post whose answer is on
 * its way); one that takes longer (say, waiting out a long 429) is then abandoned with an
 * error rather than awaited, and its request aborted: a post held back by discord.js's queue
 * is then never sent, so it cannot land behind the back of the next start, which finds the
 * post in the ledger without its message, looks for it on Discord and, not finding it, makes
 * it. Waiting for it would hold the node's shutdown for as long as Discord says.
 */

export class BridgeStoppingError extends Error {
  constructor() {
    super("the Discord bridge is stopping; the call was abandoned (it is made again at the next start)");
    this.name = "BridgeStoppingError";
  }
}

export class ClientGate {
  #close!: () => void;
  #closed = false;
  readonly #abort = new AbortController();
  readonly #stopped = new Promise<never>((_, reject) => (this.#close = () => reject(new BridgeStoppingError())));

  constructor() {
    this.#stopped.catch(() => undefined);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The bridge stops: new calls reject at once, calls running once `graceMs` is over (their requests aborted). */
  close(graceMs = 0): void {
    this.#closed = true;
    const cutOff = () => {
      this.#abort.abort(new BridgeStoppingError());
      this.#close();
    };
    if (graceMs <= 0) return cutOff();
    setTimeout(cutOff, graceMs).unref?.();
  }

  /** Runs `call`, which passes `signal` to the requests it makes, so the cut-off aborts them. */
  run<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new BridgeStoppingError());
    const running = call(this.#abort.signal);
    // The abandoned call may still fail later: that is no one's error any more.
    running.catch(() => undefined);
    return Promise.race([running, this.#stopped]);
  }
}
