/**
 * The bridge's own Web API client, and Slack's errors as the core understands them.
 *
 * The client never retries by itself: a retried chat.postMessage whose first attempt reached
 * Slack (the answer lost on the way back) would post twice. A failed post goes back to the
 * core instead, which asks Slack for it (`find`) before posting again. A 429 is not applied by
 * Slack, so it is safe to repeat: it becomes a `RateLimitedError` with Retry-After, which the
 * core's ChannelQueue waits out and retries, in order, without dropping anything.
 */
import { webApi, type Logger } from "@slack/bolt";
import { RateLimitedError } from "../core/index.ts";
import type { SlackCredentials } from "./slackOptions.ts";

export type SlackClient = InstanceType<typeof webApi.WebClient>;

/** How long one Web API call may take before it counts as failed (and the core retries it). */
const CALL_TIMEOUT_MS = 30_000;

export function createSlackClient(credentials: SlackCredentials, logger: Logger): SlackClient {
  return new webApi.WebClient(credentials.botToken, {
    logger,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: CALL_TIMEOUT_MS,
    ...(credentials.apiUrl ? { slackApiUrl: credentials.apiUrl } : {}),
  });
}

/** The options Bolt's own clients (the App's, the Socket Mode client's) get: the same API, the same logger. */
export function boltClientOptions(credentials: SlackCredentials, logger: Logger): { slackApiUrl?: string; logger: Logger } {
  return { logger, ...(credentials.apiUrl ? { slackApiUrl: credentials.apiUrl } : {}) };
}

/** Slack's error code (`invalid_auth`, `already_reacted`, ...) when the API answered `ok: false`. */
export function slackErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; data?: { error?: unknown } } | undefined;
  return e?.code === webApi.ErrorCode.PlatformError && typeof e.data?.error === "string" ? e.data.error : undefined;
}

/** Runs a Web API call; a 429 comes out as the core's `RateLimitedError`. */
export async function slackCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = err as { code?: unknown; retryAfter?: unknown } | undefined;
    if (e?.code === webApi.ErrorCode.RateLimitedError) {
      const seconds = typeof e.retryAfter === "number" && Number.isFinite(e.retryAfter) ? e.retryAfter : 1;
      throw new RateLimitedError(`Slack rate-limited ${what}; retry in ${seconds} s`, seconds * 1000);
    }
    throw err;
  }
}
