/**
 * Builds a `CompletionStream` from a producer function. Every streaming provider (the SDK
 * adapters, the retry wrapper, the cascade) needs the same plumbing: chunks buffered in order
 * for one consumer, a `final` promise that settles with the whole completion or the failure,
 * and a way to cancel the underlying request when the consumer stops early. Writing it once
 * keeps their edge cases (late chunks, unobserved rejections, early `break`) identical.
 */
import type { Completion, CompletionRequest, CompletionStream } from "./LanguageModel.ts";
import { ProviderError } from "./ProviderError.ts";

export interface StreamSink {
  /** Hands a chunk to the consumer. Empty chunks carry nothing and are dropped. */
  emit(chunk: string): void;
  /** Fires when the consumer stops iterating early, so the producer can cancel its request. */
  readonly signal: AbortSignal;
}

export type StreamProducer = (sink: StreamSink) => Promise<Completion>;

type Settled = { ok: true } | { ok: false; error: unknown };

/**
 * The producer starts lazily, on the first iteration or the first read of `final`, so that
 * creating a stream and handing it around never fires a request nobody is listening to.
 */
export function createCompletionStream(provider: string, produce: StreamProducer): CompletionStream {
  const queue: string[] = [];
  const stop = new AbortController();
  let settled: Settled | undefined;
  let wake: (() => void) | undefined;
  let started = false;
  let iterated = false;

  let resolveFinal!: (c: Completion) => void;
  let rejectFinal!: (e: unknown) => void;
  const final = new Promise<Completion>((resolve, reject) => {
    resolveFinal = resolve;
    rejectFinal = reject;
  });
  // A caller that only iterates learns of a failure from the iterator; without this the same
  // failure would also surface as an unhandled rejection of `final` and crash the process.
  final.catch(() => undefined);

  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const sink: StreamSink = {
    emit(chunk) {
      if (settled || stop.signal.aborted || chunk.length === 0) return;
      queue.push(chunk);
      notify();
    },
    signal: stop.signal,
  };

  const start = (): void => {
    if (started) return;
    started = true;
    // Deferred to a microtask so a producer that throws synchronously still rejects `final`.
    Promise.resolve()
      .then(() => produce(sink))
      .then(
        (completion) => {
          settled = { ok: true };
          resolveFinal(completion);
          notify();
        },
        (error: unknown) => {
          settled = { ok: false, error };
          rejectFinal(error);
          notify();
        },
      );
  };

  const iterator: AsyncIterator<string> = {
    async next(): Promise<IteratorResult<string>> {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) return { value: chunk, done: false };
        if (settled) {
          if (settled.ok) return { value: undefined, done: true };
          throw settled.error;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
    async return(): Promise<IteratorResult<string>> {
      if (!settled) {
        stop.abort(new ProviderError({ provider, kind: "aborted", message: "stream consumer stopped early" }));
      }
      queue.length = 0;
      return { value: undefined, done: true };
    },
  };

  return {
    get final(): Promise<Completion> {
      start();
      return final;
    },
    [Symbol.asyncIterator](): AsyncIterator<string> {
      // Chunks are handed out once; a second reader would silently miss what the first took.
      if (iterated) throw new Error("A CompletionStream can be iterated only once");
      iterated = true;
      start();
      return iterator;
    },
  };
}

/**
 * A stream over a whole answer: one request without streaming, its text handed out as one
 * chunk. The SDK adapters answer requests with tools this way, because a tool call streams as
 * partial JSON that is useless until complete, and the tool loop waits for it anyway.
 */
export function streamWhole(
  provider: string,
  complete: (request: CompletionRequest) => Promise<Completion>,
  request: CompletionRequest,
): CompletionStream {
  return createCompletionStream(provider, async (sink) => {
    const signal = linkSignals(request.signal, sink.signal);
    const completion = await complete(signal !== undefined ? { ...request, signal } : request);
    sink.emit(completion.text);
    return completion;
  });
}

/** Reads a whole stream; used where a `complete` is implemented on top of `stream`. */
export async function collectStream(stream: CompletionStream): Promise<Completion> {
  for await (const _chunk of stream) {
    // Draining is the point: `final` settles once the producer has finished.
  }
  return stream.final;
}

/**
 * Forwards an inner stream's chunks to a sink. `progress.chunks` tells a wrapper (retry,
 * cascade) whether the consumer has already seen text, which decides whether the failure
 * can still be hidden by trying again.
 */
export async function relay(
  inner: CompletionStream,
  sink: Pick<StreamSink, "emit">,
  progress: { chunks: number } = { chunks: 0 },
): Promise<Completion> {
  for await (const chunk of inner) {
    progress.chunks += 1;
    sink.emit(chunk);
  }
  return inner.final;
}

/** One signal that fires when any of the given ones does (undefined when none is given). */
export function linkSignals(...signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
