/**
 * The retry policy, as a wrapper so every provider gets the same one (the SDKs' own retries
 * are switched off). Only failures another attempt may get past are retried (429, 5xx,
 * timeouts, broken streams); auth, bad requests and caller aborts fail at once.
 *
 * A stream is retried only while the consumer has seen nothing: after the first chunk a
 * retry would replay text the consumer already has, so the failure is surfaced instead.
 * `request.timeoutMs` bounds each attempt, not the whole series.
 */
import { createCompletionStream, linkSignals, relay } from "./completionStream.ts";
import { sleep } from "./deadline.ts";
import type { Completion, CompletionRequest, CompletionStream, LanguageModel } from "./LanguageModel.ts";
import { ProviderError, isProviderError } from "./ProviderError.ts";

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  error: ProviderError;
}

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries?: number;
  baseDelayMs?: number;
  /** Caps both the backoff and a server's `retry-after`. */
  maxDelayMs?: number;
  /** In [0, 1); injectable so tests can pin the jitter. */
  random?: () => number;
  /** Injectable so tests can observe delays without waiting for them. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  onRetry?: (info: RetryInfo) => void;
}

const DEFAULTS = { retries: 2, baseDelayMs: 250, maxDelayMs: 10_000 };

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random, so clients
 * that failed together spread out but none retries immediately. A server's `retry-after` is
 * a floor (retrying sooner would just be refused again), capped by `maxDelayMs` so one
 * header cannot stall a soul for minutes.
 */
export function retryDelay(
  attempt: number,
  error: ProviderError,
  opts: { baseDelayMs: number; maxDelayMs: number; random: () => number },
): number {
  const step = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1));
  const jittered = step / 2 + opts.random() * (step / 2);
  const floor = error.retryAfterMs ?? 0;
  return Math.round(Math.min(opts.maxDelayMs, Math.max(jittered, floor)));
}

export function withRetry(model: LanguageModel, options: RetryOptions = {}): LanguageModel {
  const retries = Math.max(0, options.retries ?? DEFAULTS.retries);
  const delayOpts = {
    baseDelayMs: options.baseDelayMs ?? DEFAULTS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? DEFAULTS.maxDelayMs,
    random: options.random ?? Math.random,
  };
  const wait = options.sleep ?? sleep;

  /** Waits before retry `attempt`, or rethrows when the failure is final. */
  const backoff = async (error: unknown, attempt: number, signal: AbortSignal | undefined): Promise<void> => {
    if (!isProviderError(error) || !error.retryable || attempt > retries) throw error;
    if (signal?.aborted) throw abortedError(model.provider, error);
    const delayMs = retryDelay(attempt, error, delayOpts);
    options.onRetry?.({ attempt, delayMs, error });
    try {
      await wait(delayMs, signal);
    } catch {
      throw abortedError(model.provider, error);
    }
  };

  return {
    provider: model.provider,

    async complete(request: CompletionRequest): Promise<Completion> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await model.complete(request);
        } catch (error) {
          await backoff(error, attempt, request.signal);
        }
      }
    },

    stream(request: CompletionRequest): CompletionStream {
      return createCompletionStream(model.provider, async (sink) => {
        const signal = linkSignals(request.signal, sink.signal);
        for (let attempt = 1; ; attempt++) {
          const progress = { chunks: 0 };
          try {
            return await relay(model.stream({ ...request, signal }), sink, progress);
          } catch (error) {
            if (progress.chunks > 0) throw error;
            await backoff(error, attempt, signal);
          }
        }
      });
    },
  };
}

function abortedError(provider: string, last: ProviderError): ProviderError {
  return new ProviderError({ provider, kind: "aborted", message: "aborted while waiting to retry", cause: last });
}
