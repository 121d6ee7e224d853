/**
 * Streamed text kept from the start: the producer pushes chunks and then ends (with the
 * failure, if it failed); every reader gets every chunk in order from the first, then the
 * end, or the failure thrown. Producing never waits for a reader, so a step completes even
 * when nobody reads its stream.
 */
export interface ChunkQueue {
  push(chunk: string): void;
  /** No more chunks. A reader that reaches the end gets `failure` thrown, unless it is undefined. */
  end(failure?: unknown): void;
  readonly chunks: AsyncIterable<string>;
}

export function chunkQueue(): ChunkQueue {
  const chunks: string[] = [];
  let done = false;
  let failure: unknown;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  return {
    push(chunk) {
      chunks.push(chunk);
      wake();
    },
    end(error) {
      failure = error;
      done = true;
      wake();
    },
    chunks: {
      async *[Symbol.asyncIterator]() {
        let i = 0;
        for (;;) {
          if (i < chunks.length) {
            yield chunks[i++];
            continue;
          }
          if (done) {
            if (failure !== undefined) throw failure;
            return;
          }
          await new Promise<void>((resolve) => waiters.push(resolve));
        }
      },
    },
  };
}
