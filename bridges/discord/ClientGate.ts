/**
 * The bridge's REST calls to Discord, cut off when the bridge stops.
 *
 * A call still running when the bridge stops has a moment to finish (a post whose answer is on
 * its way); one that takes longer (say, waiting out a long 429) is then abandoned with an
 * error rather than awaited: the speech stays unacknowledged on the bus and is delivered again
 * at the next start, where the post's nonce makes a repeat the same message. Waiting for it
 * would hold the node's shutdown for as long as Discord says.
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
  readonly #stopped = new Promise<never>((_, reject) => (this.#close = () => reject(new BridgeStoppingError())));

  constructor() {
    this.#stopped.catch(() => undefined);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The bridge stops: new calls reject at once, calls running once `graceMs` is over. */
  close(graceMs = 0): void {
    this.#closed = true;
    if (graceMs <= 0) return this.#close();
    setTimeout(() => this.#close(), graceMs).unref?.();
  }

  run<T>(call: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new BridgeStoppingError());
    const running = call();
    // The abandoned call may still fail later: that is no one's error any more.
    running.catch(() => undefined);
    return Promise.race([running, this.#stopped]);
  }
}
