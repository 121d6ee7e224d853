/**
 * The bounds on the HTTP bridge's live speech streams (SSE clients and WebSockets): how many
 * may be open at once on a server, and how far a client may fall behind. A client that does
 * not read is dropped rather than buffered for without bound (it reconnects and resumes with
 * Last-Event-ID), as the debugger's EventStream does.
 */
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

export class StreamLimits {
  #open = 0;

  constructor(
    readonly maxStreams: number,
    readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
  ) {}

  get open(): number {
    return this.#open;
  }

  /** Takes a place for a new stream: a function that gives it back (once), or undefined when all are taken. */
  take(): (() => void) | undefined {
    if (this.#open >= this.maxStreams) return undefined;
    this.#open++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#open--;
    };
  }

  /** A client with this much still unsent is too far behind to keep. */
  behind(buffered: number): boolean {
    return buffered > this.maxBufferedBytes;
  }
}
