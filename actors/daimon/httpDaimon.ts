/**
 * The whisper protocol's client: an existing daimon service (one that serves
 * `POST /api/whisper`) used as a divination, in place of the daimon's own model.
 *
 * Failures are told apart because they call for different things: 401/403 is a
 * configuration error (a clear error, and no further requests with that token); 503 or 429
 * means no whisper this time (null, not an error); a timeout or an unreachable service is an
 * error the daimon reports before it goes on watching. The token is sent in the header and
 * nowhere else: no error message, log line or `cause` carries it.
 */
import type { Divination, DivinationRequest } from "./divination.ts";
import { sanitizeWhisper } from "./sanitizeWhisper.ts";
import { formatTranscript } from "./transcript.ts";
import { assertToken, WHISPER_PATH, whisperResponseSchema, type WhisperRequest } from "./whisperProtocol.ts";

export type WhisperClientErrorKind = "unauthorized" | "timeout" | "aborted" | "unreachable" | "bad-response" | "http";

export class WhisperClientError extends Error {
  readonly kind: WhisperClientErrorKind;
  readonly status: number | undefined;
  constructor(kind: WhisperClientErrorKind, message: string, status?: number) {
    super(message);
    this.name = "WhisperClientError";
    this.kind = kind;
    this.status = status;
  }
}

export interface HttpDaimonOptions {
  /** The endpoint; a bare origin (`http://127.0.0.1:3033`) gets `/api/whisper` appended. */
  url: string;
  token: string;
  /** Default 5 s, as the reference client. */
  timeoutMs?: number;
  /** Who asks (the request's `source`); defaults to the soul's name. */
  source?: string;
  /** The asking soul's state, when the caller knows it; defaults to none. */
  soulState?: (request: DivinationRequest) => Record<string, string | number | boolean | null>;
}

/** The reference client sends a 200-character thought; a transcript gets a little more room. */
const MONOLOGUE_MAX_CHARS = 2000;

function endpointOf(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError("httpDaimon: url is not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`httpDaimon: url must be http or https, got ${url.protocol}`);
  // fetch refuses such URLs anyway; say why, and keep secrets out of URLs that end up in logs.
  if (url.username || url.password) throw new TypeError("httpDaimon: url must not contain credentials; pass the token option");
  if (url.pathname === "/" || url.pathname === "") url.pathname = WHISPER_PATH;
  return url;
}

/** The endpoint as errors show it: no credentials, no query string. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function requestBody(options: HttpDaimonOptions, request: DivinationRequest): WhisperRequest {
  const transcript = formatTranscript(request.transcript);
  return {
    source: (options.source ?? request.soulName).slice(0, 256) || "soul",
    context: {
      soul_state: options.soulState?.(request) ?? {},
      // The most recent part matters most: cut from the front.
      recent_monologue: transcript.length > MONOLOGUE_MAX_CHARS ? transcript.slice(-MONOLOGUE_MAX_CHARS) : transcript,
      interaction_count: request.interactionCount,
    },
  };
}

/** A divination that asks a whisper service. */
export function httpDaimon(options: HttpDaimonOptions): Divination {
  const url = endpointOf(options.url);
  const where = shown(url);
  const token = assertToken(options.token, "httpDaimon");
  const timeoutMs = options.timeoutMs ?? 5000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`httpDaimon: timeoutMs must be positive, got ${timeoutMs}`);
  // Any message could echo what was sent; make sure the token never survives in one.
  const scrub = (text: string) => text.split(token).join("[token]");
  let refused: WhisperClientError | undefined;

  return async (request) => {
    if (refused) throw refused;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([request.signal, timeout]);
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(requestBody(options, request)),
        signal,
      });
    } catch (error) {
      if (request.signal.aborted) throw new WhisperClientError("aborted", "divination aborted (the daimon was switched off or stopped)");
      if (timeout.aborted) throw new WhisperClientError("timeout", `no answer from ${where} within ${timeoutMs} ms`);
      const code = (error as { cause?: { code?: unknown } })?.cause?.code;
      throw new WhisperClientError("unreachable", scrub(`could not reach ${where}${typeof code === "string" ? ` (${code})` : ""}`));
    }

    try {
      if (res.status === 401 || res.status === 403) {
        refused = new WhisperClientError(
          "unauthorized",
          `${where} refused the token (HTTP ${res.status}); check the configured token. No further requests are made with it.`,
          res.status,
        );
        throw refused;
      }
      // Busy, off or rate-limited: nothing to whisper this time.
      if (res.status === 503 || res.status === 429) return null;
      if (!res.ok) throw new WhisperClientError("http", `${where} answered HTTP ${res.status}`, res.status);
      let json: unknown;
      try {
        json = await res.json();
      } catch {
        if (timeout.aborted) throw new WhisperClientError("timeout", `no answer from ${where} within ${timeoutMs} ms`);
        throw new WhisperClientError("bad-response", `${where} did not answer JSON`, res.status);
      }
      const parsed = whisperResponseSchema.safeParse(json);
      if (!parsed.success) throw new WhisperClientError("bad-response", `${where} answered without a whisper string`, res.status);
      return sanitizeWhisper(parsed.data.whisper) || null;
    } finally {
      // An unread body would hold the connection open.
      if (!res.bodyUsed) await res.body?.cancel().catch(() => undefined);
    }
  };
}
