/**
 * The provider cascade: try providers in order, fall through on failure, and keep a failing
 * provider out of the way for a while (neurosymbolic-bridge: "intelligence is often a matter
 * of availability").
 *
 * A penalised provider moves to the back; when its penalty expires it returns to its
 * configured place, because the configured order is a preference (cost, speed, privacy) and
 * a rate limit or outage is temporary. While penalised it is still tried as a last resort,
 * after every healthy provider has failed: a degraded answer beats none.
 */
import { createCompletionStream, linkSignals, relay } from "./completionStream.ts";
import type { Completion, CompletionRequest, CompletionStream, LanguageModel } from "./LanguageModel.ts";
import { normaliseTarget, type ModelTarget, type NormalisedTarget } from "./ModelTarget.ts";
import { ProviderError, isProviderError, type ProviderFailureKind } from "./ProviderError.ts";

export interface CascadeOptions {
  /** How long a failing provider stays at the back. */
  penaltyMs?: number;
  /** The clock; injectable so tests can move past a penalty without waiting. */
  now?: () => number;
  /**
   * Checks an answer; a returned string is the problem, and the answer counts as a `format`
   * failure (penalty and fall-through, as long as the consumer has not seen any of it).
   */
  validate?: (completion: Completion, request: CompletionRequest) => string | undefined;
}

export interface CascadeFailure {
  /** The member's label: `provider`, or `provider:modelId` when the member names a model. */
  provider: string;
  error: Error;
}

export interface CascadeMemberStatus {
  provider: string;
  /** Place in the configured order. */
  position: number;
  /** Clock time the penalty ends, or null when the member is healthy. */
  penalisedUntil: number | null;
  lastFailure?: string;
}

export interface CascadeStatus {
  now: number;
  /** Members in the order the next call will try them. */
  order: CascadeMemberStatus[];
}

export interface Cascade extends LanguageModel {
  status(): CascadeStatus;
  /** Lifts every penalty. */
  reset(): void;
}

/** Every member failed. `failures` keeps each one, in the order they were tried. */
export class CascadeError extends ProviderError {
  readonly failures: readonly CascadeFailure[];

  constructor(failures: readonly CascadeFailure[]) {
    const kinds = failures.map((f) => kindOf(f.error));
    const rateLimits = failures.map((f) => (isProviderError(f.error) ? f.error.retryAfterMs : undefined));
    const kind = summaryKind(kinds);
    const waits = rateLimits.filter((ms): ms is number => ms !== undefined);
    super({
      provider: "cascade",
      kind,
      message: `every provider failed: ${failures.map((f, i) => `${f.provider} [${kinds[i]}] ${f.error.message}`).join("; ")}`,
      ...(kind === "rate_limit" && waits.length > 0 ? { retryAfterMs: Math.min(...waits) } : {}),
      cause: failures.at(-1)?.error,
    });
    this.name = "CascadeError";
    this.failures = failures;
  }
}

function kindOf(error: Error): ProviderFailureKind | "error" {
  return isProviderError(error) ? error.kind : "error";
}

/** One kind for the whole cascade, so a `withRetry` around it still decides sensibly. */
function summaryKind(kinds: ReadonlyArray<ProviderFailureKind | "error">): ProviderFailureKind {
  const first = kinds[0];
  if (first !== undefined && first !== "error" && kinds.every((k) => k === first)) return first;
  const retryable = new Set<string>(["rate_limit", "server", "timeout", "stream"]);
  if (kinds.some((k) => retryable.has(k))) return "server";
  return first === undefined || first === "error" ? "server" : first;
}

interface Member extends NormalisedTarget {
  position: number;
  penalisedUntil: number;
  penalisedAt: number;
  lastFailure?: string;
}

export function createCascade(models: readonly ModelTarget[], options: CascadeOptions = {}): Cascade {
  if (models.length === 0) throw new Error("createCascade needs at least one model");
  const penaltyMs = options.penaltyMs ?? 30_000;
  const now = options.now ?? Date.now;
  const members: Member[] = models.map((m, position) => ({
    ...normaliseTarget(m),
    position,
    penalisedUntil: 0,
    penalisedAt: 0,
  }));

  const order = (t: number): Member[] => {
    const healthy = members.filter((m) => m.penalisedUntil <= t);
    // Most recently penalised last: it is the least likely to have recovered.
    const penalised = members.filter((m) => m.penalisedUntil > t).sort((a, b) => a.penalisedAt - b.penalisedAt);
    return [...healthy, ...penalised];
  };

  const penalise = (m: Member, error: Error): void => {
    m.lastFailure = error.message;
    // A rejected request says nothing about the provider's health; another provider may accept it.
    if (isProviderError(error) && error.kind === "bad_request") return;
    const t = now();
    m.penalisedAt = t;
    m.penalisedUntil = t + penaltyMs;
  };

  const recover = (m: Member): void => {
    m.penalisedUntil = 0;
  };

  const requestFor = (m: Member, request: CompletionRequest, signal?: AbortSignal): CompletionRequest => {
    // The cascade's own `model` cannot fit every provider; each member brings its own id.
    const { model: _ignored, ...rest } = request;
    return {
      ...rest,
      ...(m.modelId !== undefined ? { model: m.modelId } : {}),
      ...(signal !== undefined ? { signal } : {}),
    };
  };

  const check = (m: Member, completion: Completion, request: CompletionRequest): void => {
    const problem = options.validate?.(completion, request);
    if (problem !== undefined) {
      throw new ProviderError({ provider: m.model.provider, kind: "format", message: problem });
    }
  };

  /** A caller's abort ends the cascade; it is no reason to bother the next provider. */
  const isAbort = (error: Error, signal: AbortSignal | undefined): boolean =>
    signal?.aborted === true || (isProviderError(error) && error.kind === "aborted");

  return {
    provider: "cascade",

    async complete(request: CompletionRequest): Promise<Completion> {
      const failures: CascadeFailure[] = [];
      for (const m of order(now())) {
        try {
          const completion = await m.model.complete(requestFor(m, request));
          check(m, completion, request);
          recover(m);
          return completion;
        } catch (e) {
          const error = asError(e);
          if (isAbort(error, request.signal)) throw error;
          penalise(m, error);
          failures.push({ provider: m.label, error });
        }
      }
      throw new CascadeError(failures);
    },

    stream(request: CompletionRequest): CompletionStream {
      return createCompletionStream("cascade", async (sink) => {
        const signal = linkSignals(request.signal, sink.signal);
        const failures: CascadeFailure[] = [];
        for (const m of order(now())) {
          const progress = { chunks: 0 };
          try {
            const completion = await relay(m.model.stream(requestFor(m, request, signal)), sink, progress);
            check(m, completion, request);
            recover(m);
            return completion;
          } catch (e) {
            const error = asError(e);
            if (isAbort(error, signal)) throw error;
            penalise(m, error);
            if (progress.chunks > 0) {
              // The consumer holds part of this answer; another provider's answer would not continue it.
              throw new ProviderError({
                provider: m.model.provider,
                kind: isProviderError(error) && error.kind === "format" ? "format" : "stream",
                message: `${m.label} failed after ${progress.chunks} chunk(s), too late to fall through: ${error.message}`,
                cause: error,
              });
            }
            failures.push({ provider: m.label, error });
          }
        }
        throw new CascadeError(failures);
      });
    },

    status(): CascadeStatus {
      const t = now();
      return {
        now: t,
        order: order(t).map((m) => ({
          provider: m.label,
          position: m.position,
          penalisedUntil: m.penalisedUntil > t ? m.penalisedUntil : null,
          ...(m.lastFailure !== undefined ? { lastFailure: m.lastFailure } : {}),
        })),
      };
    },

    reset(): void {
      for (const m of members) recover(m);
    },
  };
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
