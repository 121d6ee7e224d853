/**
 * What the SDK-backed providers (Anthropic, Groq) share: how their options resolve against
 * the environment, the settings their SDK client is built with, and how one request runs
 * under our own deadline with every failure classified into a `ProviderError`.
 *
 * The SDK's own retries are off by default (`maxRetries: 0`): `withRetry` and the cascade own
 * the retry policy, and two stacked policies would multiply attempts and hide 429s from the
 * cascade's penalty logic. The timeout is ours too (see deadline.ts).
 */
import { startDeadline, type RequestDeadline } from "./deadline.ts";
import type { CompletionRequest } from "./LanguageModel.ts";
import { ProviderError } from "./ProviderError.ts";
import { toProviderError, type SdkErrorClasses } from "./sdkErrors.ts";

/** A whole-request deadline: long enough for a long streamed answer, short enough that a hung socket fails. */
const DEFAULT_TIMEOUT_MS = 120_000;
/** The APIs require a token cap; cognitive steps are short, and a caller can ask for more. */
const DEFAULT_MAX_TOKENS = 1024;

export interface SdkModelOptions {
  /** Defaults to the provider's key variable (`ANTHROPIC_API_KEY`, `GROQ_API_KEY`). */
  apiKey?: string;
  /**
   * Defaults to the provider's base-URL variable (`ANTHROPIC_BASE_URL`, `GROQ_BASE_URL`), then
   * the SDK's default host; `null` skips the environment.
   */
  baseURL?: string | null;
  defaultModel?: string;
  /** Retries inside the SDK; 0 unless you really want two retry policies. */
  maxRetries?: number;
  /** Deadline for each request unless the request sets `timeoutMs`. */
  timeoutMs?: number;
  /** The token cap when the request sets no `maxTokens`. */
  maxTokens?: number;
}

/** What differs between the SDK-backed providers, as far as their settings go. */
export interface SdkProvider {
  provider: string;
  /** The environment variable the API key is read from. */
  apiKeyEnv: string;
  /** The environment variable the base URL is read from. */
  baseUrlEnv: string;
  defaultModel: string;
  /** The SDK's error classes, for `toProviderError`. */
  sdk: SdkErrorClasses;
}

/** The settings an SDK client is constructed with (both SDKs take the same ones). */
export interface SdkClientSettings {
  apiKey: string;
  baseURL: string | null;
  maxRetries: number;
  timeout: number;
  logLevel: "off";
}

export interface SdkSettings {
  provider: string;
  sdk: SdkErrorClasses;
  defaultModel: string;
  timeoutMs: number;
  maxTokens: number;
  /** Strings that must never reach an error message (the API key). */
  secrets: readonly string[];
  client: SdkClientSettings;
}

/** Resolves a provider's options against the environment; throws an `auth` ProviderError without a key. */
export function sdkSettings(p: SdkProvider, opts: SdkModelOptions): SdkSettings {
  const apiKey = opts.apiKey ?? process.env[p.apiKeyEnv];
  if (!apiKey) {
    throw new ProviderError({ provider: p.provider, kind: "auth", message: `no API key: pass apiKey or set ${p.apiKeyEnv}` });
  }
  // null means the SDK's own host; it also stops the SDK from reading the base-URL variable itself.
  const baseURL = opts.baseURL === null ? null : (opts.baseURL ?? process.env[p.baseUrlEnv] ?? null);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    provider: p.provider,
    sdk: p.sdk,
    defaultModel: opts.defaultModel ?? p.defaultModel,
    timeoutMs,
    maxTokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
    secrets: [apiKey],
    client: {
      apiKey,
      baseURL,
      maxRetries: opts.maxRetries ?? 0,
      timeout: timeoutMs,
      // Failures reach callers as classified errors; SDK log lines would only duplicate them.
      logLevel: "off",
    },
  };
}

/**
 * Runs one SDK request under our deadline: the request's `timeoutMs` (else the model's), the
 * request's signal and `extra` (a stream consumer stopping early). Whatever `run` throws comes
 * out as a classified ProviderError. `run` calls `opened()` once the response headers arrived:
 * from then on a dropped connection is a broken stream, not an unreachable API.
 */
export async function underDeadline<T>(
  settings: SdkSettings,
  request: CompletionRequest,
  extra: AbortSignal | undefined,
  run: (deadline: RequestDeadline, opened: () => void) => Promise<T>,
): Promise<T> {
  const deadline = startDeadline(request.timeoutMs ?? settings.timeoutMs, [request.signal, extra]);
  let streaming = false;
  try {
    return await run(deadline, () => {
      streaming = true;
    });
  } catch (err) {
    throw toProviderError(err, { provider: settings.provider, sdk: settings.sdk, deadline, secrets: settings.secrets, streaming });
  } finally {
    deadline.dispose();
  }
}
