/**
 * One abort signal per provider request that fires on the caller's signal, on the
 * request deadline, or on a stream consumer stopping early.
 *
 * Why our own timer instead of the SDKs' `timeout` option: the SDKs arm their timer around
 * `fetch` only, so a streaming body that stalls after the headers would hang forever; and
 * they swallow an abort that happens mid-stream (the iterator just ends), so the adapter
 * must be able to ask afterwards *why* the signal fired to report `timeout` vs `aborted`.
 */

export type AbortCause = "timeout" | "aborted";

export interface RequestDeadline {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Why the signal fired, or undefined while it has not. */
  cause(): AbortCause | undefined;
  /** Clears the timer; call when the request is over so the process can exit. */
  dispose(): void;
}

export function startDeadline(timeoutMs: number, signals: ReadonlyArray<AbortSignal | undefined>): RequestDeadline {
  const controller = new AbortController();
  const external = signals.filter((s): s is AbortSignal => s !== undefined);
  // Whichever fired first is the answer: a caller that gave up before the deadline aborted.
  let first: AbortCause | undefined;
  const fire = (cause: AbortCause): void => {
    first ??= cause;
    controller.abort();
  };

  const onExternalAbort = (): void => fire("aborted");
  for (const s of external) {
    if (s.aborted) fire("aborted");
    else s.addEventListener("abort", onExternalAbort, { once: true });
  }

  const timer =
    Number.isFinite(timeoutMs) && timeoutMs > 0 ? setTimeout(() => fire("timeout"), timeoutMs) : undefined;

  return {
    signal: controller.signal,
    timeoutMs,
    cause() {
      return first;
    },
    dispose() {
      if (timer) clearTimeout(timer);
      for (const s of external) s.removeEventListener("abort", onExternalAbort);
    },
  };
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
