/**
 * The whisper endpoint: ensoul serving the existing whisper protocol (whisperProtocol.ts),
 * so a soul elsewhere (Claudius, another framework) can ask an ensoul daimon for a whisper.
 *
 * Status codes: 200 an answer (possibly an empty whisper), 400 a malformed body, 401 a
 * missing or wrong bearer token, 404 any other path, 405 any other method, 413 a body over
 * 64 KiB, 503 the daimon is off, failed or took too long. Every whisper leaves sanitised.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerDigest, bearerMatches, readJsonBody, sendJson as send } from "../../runtime/http/index.ts";
import type { Divination } from "./divination.ts";
import { sanitizeWhisper } from "./sanitizeWhisper.ts";
import type { TranscriptLine } from "./transcript.ts";
import {
  assertToken,
  DEFAULT_INFLUENCE,
  WHISPER_MAX_BODY_BYTES,
  WHISPER_PATH,
  whisperRequestSchema,
  type WhisperReply,
  type WhisperRequest,
} from "./whisperProtocol.ts";

/** Throw it from a handler for a 503: the daimon cannot whisper now (off, busy, no model). */
export class DaimonUnavailableError extends Error {
  constructor(message = "the daimon is unavailable") {
    super(message);
    this.name = "DaimonUnavailableError";
  }
}

/** A whisper (with an optional influence), a bare string, or nothing to say (null, undefined, ""). */
export type WhisperAnswer = { whisper: string; influence?: number } | string | null | undefined;

export type WhisperRequestHandler = (request: WhisperRequest, info: { signal: AbortSignal }) => WhisperAnswer | Promise<WhisperAnswer>;

export interface WhisperEndpointOptions {
  /** 0 picks a free port (see `port` on the result). */
  port: number;
  /** Loopback by default: exposing a daimon beyond the machine is a deliberate choice. */
  host?: string;
  token: string;
  onWhisperRequest: WhisperRequestHandler;
  /** False while the daimon is off: 503 without calling the handler. */
  available?: () => boolean;
  /** A handler slower than this gets a 503 and its signal aborted. Default 10 s. */
  handlerTimeoutMs?: number;
  /** Told of handler failures (the client only ever sees a plain 503). */
  onError?: (error: unknown) => void;
}

export interface WhisperEndpoint {
  /** `http://host:port/api/whisper`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

function toReply(answer: WhisperAnswer): WhisperReply {
  const raw = typeof answer === "string" ? { whisper: answer } : (answer ?? { whisper: "" });
  const whisper = sanitizeWhisper(typeof raw.whisper === "string" ? raw.whisper : "");
  if (!whisper) return { whisper: "", influence: 0 };
  const given = "influence" in raw ? raw.influence : undefined;
  const influence = typeof given === "number" && Number.isFinite(given) ? Math.min(1, Math.max(0, given)) : DEFAULT_INFLUENCE;
  return { whisper, influence };
}

function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, outer: AbortSignal): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer.reason);
  outer.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new DaimonUnavailableError(`no whisper within ${ms} ms`));
      reject(new DaimonUnavailableError(`no whisper within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work(controller.signal), timeout]).finally(() => {
    clearTimeout(timer);
    outer.removeEventListener("abort", onAbort);
  });
}

/**
 * Answers one whisper request whose path and bearer token are already checked: the body read
 * (at most WHISPER_MAX_BODY_BYTES) and validated, the handler asked within its timeout. The
 * HTTP bridge serves the same endpoint with this.
 */
export async function answerWhisper(req: IncomingMessage, res: ServerResponse, options: Pick<WhisperEndpointOptions, "onWhisperRequest" | "available" | "handlerTimeoutMs" | "onError">): Promise<void> {
  const timeoutMs = options.handlerTimeoutMs ?? 10_000;
  const available = options.available ?? (() => true);
  if (req.method !== "POST") {
    res.setHeader("Allow", "POST");
    return send(res, 405, { error: "method not allowed; use POST" }, true);
  }
  const request = await readJsonBody(req, res, WHISPER_MAX_BODY_BYTES, whisperRequestSchema, "whisper request");
  if (request === undefined) return;
  if (!available()) return send(res, 503, { error: "the daimon is off" });

  // A client that hangs up stops the work it asked for.
  const gone = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  try {
    const answer = await withTimeout(async (signal) => options.onWhisperRequest(request, { signal }), timeoutMs, gone.signal);
    send(res, 200, toReply(answer));
  } catch (error) {
    options.onError?.(error);
    send(res, 503, { error: error instanceof DaimonUnavailableError ? error.message : "the daimon is unavailable" });
  }
}

/** Serves `POST /api/whisper` until closed. */
export async function startWhisperEndpoint(options: WhisperEndpointOptions): Promise<WhisperEndpoint> {
  const expected = bearerDigest(assertToken(options.token, "whisper endpoint"));
  const host = options.host ?? "127.0.0.1";

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://endpoint").pathname;
    if (path !== WHISPER_PATH) return send(res, 404, { error: `not found; the whisper endpoint is POST ${WHISPER_PATH}` }, true);
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      return send(res, 405, { error: "method not allowed; use POST" }, true);
    }
    if (!bearerMatches(req.headers.authorization, expected)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="ensoul-daimon"');
      return send(res, 401, { error: "missing or invalid bearer token" }, true);
    }
    await answerWhisper(req, res, options);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.onError?.(error);
      send(res, 500, { error: "internal error" }, true);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}${WHISPER_PATH}`,
    host,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

export interface DivinationHandlerOptions {
  /** The daimon's name, as the divination's voice. */
  daimonName: string;
  divine: Divination;
}

/**
 * Serves a daimon's divination over the protocol: the asking soul's state and recent
 * monologue become the transcript the daimon reads.
 */
export function divinationWhisperHandler(options: DivinationHandlerOptions): WhisperRequestHandler {
  return async (request, { signal }) => {
    const { source, context } = request;
    const transcript: TranscriptLine[] = [];
    const state =
      typeof context.soul_state === "string"
        ? context.soul_state
        : Object.entries(context.soul_state)
            .filter(([, v]) => v !== null && v !== "")
            .map(([k, v]) => `${k}: ${String(v)}`)
            .join("; ");
    if (state) transcript.push({ speaker: source, role: "soul", text: `(state) ${state}` });
    const monologue = Array.isArray(context.recent_monologue) ? context.recent_monologue : [context.recent_monologue];
    for (const thought of monologue) if (thought.trim()) transcript.push({ speaker: source, role: "soul", text: `(thought) ${thought}` });
    return options.divine({ soulName: source, daimonName: options.daimonName, transcript, interactionCount: context.interaction_count, signal });
  };
}
