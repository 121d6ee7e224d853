/**
 * The HTTP bridge's server: one per host and port, shared by every `http` bridge the node runs
 * there (one per soul), so two souls can be served on one port. Health checks are open;
 * everything else needs `Authorization: Bearer <ENSOUL_HTTP_TOKEN>`, compared in constant time.
 * Floods get 429 per client address before any work is done.
 *
 * No request, upgrade or frame may end the process: every listener catches what it calls, a
 * socket handed over by an upgrade gets an error listener at once, and a WebSocket's own errors
 * are the client's. What is bounded: connections, live streams, bodies and frames, and how
 * long a client may take to send its headers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer } from "ws";
import { answerWhisper, WHISPER_PATH, type WhisperRequestHandler } from "../../actors/daimon/index.ts";
import { bearerDigest, bearerMatches, guardedListener, sendJson } from "../../runtime/http/index.ts";
import { postPerception, type HttpSoulRoute } from "./httpRoutes.ts";
import { RateLimiter } from "./rateLimiter.ts";
import { pathOf, soulTargetOf } from "./requestPath.ts";
import { serveSocket } from "./speechSocket.ts";
import { streamSpeech, TOO_MANY_STREAMS } from "./speechStream.ts";
import { StreamLimits } from "./StreamLimits.ts";

export interface ServedSoul extends HttpSoulRoute {
  whisper?: WhisperRequestHandler;
  /** Ready: the soul's bridge is online. */
  ready(): boolean;
}

export interface HttpServerLimits {
  rateLimit: { perMinute: number; burst: number };
  /** TCP connections at once. */
  maxConnections: number;
  /** SSE clients and WebSockets at once. */
  maxStreams: number;
}

/** A client that has not sent its whole request head by then is let go (a slow client holds no connection for long). */
const HEADERS_TIMEOUT_MS = 15_000;
/** The whole request, body included (a stream's response may last; its request does not). */
const REQUEST_TIMEOUT_MS = 60_000;
/** How often Node looks for requests past those times (its default, 30 s, would let a slow client stay twice as long). */
const TIMEOUT_CHECK_MS = 5_000;

type Refusal = { status: number; error: string; headers?: Record<string, string> };

const REASONS: Readonly<Record<number, string>> = { 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable" };

/** An upgrade refused on the raw socket, as a complete HTTP response. */
function refuseUpgrade(socket: Socket, { status, error, headers = {} }: Refusal): void {
  const body = JSON.stringify({ error });
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`);
}

export class HttpBridgeServer {
  readonly #souls = new Map<string, ServedSoul>();
  /** One per soul: a WebSocket frame is bounded by its soul's `maxBodyBytes`. */
  readonly #sockets = new Map<string, WebSocketServer>();
  readonly #limiter: RateLimiter;
  readonly #streams: StreamLimits;
  #server!: Server;
  #url = "";

  private constructor(
    private readonly token: Buffer,
    limits: HttpServerLimits,
    private readonly onError: (err: unknown, what: string) => void,
  ) {
    this.#limiter = new RateLimiter(limits.rateLimit.burst, limits.rateLimit.perMinute);
    this.#streams = new StreamLimits(limits.maxStreams);
  }

  static async listen(o: { host: string; port: number; token: string; onError(err: unknown, what: string): void } & HttpServerLimits): Promise<HttpBridgeServer> {
    const server = new HttpBridgeServer(bearerDigest(o.token), o, o.onError);
    server.#server = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS }, guardedListener((req, res) => server.#handle(req, res), o.onError));
    server.#server.maxConnections = o.maxConnections;
    server.#server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => server.#upgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.#server.once("error", reject);
      server.#server.listen(o.port, o.host, () => {
        server.#server.off("error", reject);
        resolve();
      });
    });
    // Once listening, a server error (accept failing for want of file descriptors) is reported; the server goes on.
    server.#server.on("error", (err) => o.onError(err, "the HTTP server"));
    const { address, port } = server.#server.address() as AddressInfo;
    server.#url = `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
    return server;
  }

  /** Where it listens, fixed once it listens (it stays readable after the server closes). */
  get url(): string {
    return this.#url;
  }

  get serving(): number {
    return this.#souls.size;
  }

  /** Speech streams open now (SSE and WebSocket). */
  get streams(): number {
    return this.#streams.open;
  }

  add(soul: ServedSoul): void {
    if (this.#souls.has(soul.soul)) throw new Error(`soul '${soul.soul}' already has an http bridge on ${this.url}`);
    this.#souls.set(soul.soul, soul);
    this.#sockets.set(soul.soul, new WebSocketServer({ noServer: true, maxPayload: soul.maxBodyBytes }));
  }

  remove(soulId: string): void {
    this.#souls.delete(soulId);
    this.#closeSockets(soulId);
  }

  async close(): Promise<void> {
    for (const soulId of [...this.#sockets.keys()]) this.#closeSockets(soulId);
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  #closeSockets(soulId: string): void {
    const wss = this.#sockets.get(soulId);
    if (!wss) return;
    this.#sockets.delete(soulId);
    for (const ws of wss.clients) ws.close(1001, "the bridge is stopping");
    wss.close();
  }

  /** Refuses what is not allowed before any work: unauthenticated, flooding. */
  #admit(req: IncomingMessage): Refusal | undefined {
    if (!bearerMatches(req.headers.authorization, this.token)) return { status: 401, error: "missing or invalid bearer token", headers: { "WWW-Authenticate": 'Bearer realm="ensoul"' } };
    const wait = this.#limiter.take(clientOf(req.socket));
    if (wait > 0) return { status: 429, error: `too many requests; retry in ${Math.ceil(wait / 1000)} s`, headers: { "Retry-After": String(Math.ceil(wait / 1000)) } };
    return undefined;
  }

  /** Without the token, only whether the node is ready: which souls it serves is for those who may talk to them. */
  #ready(req: IncomingMessage, res: ServerResponse): void {
    const souls = [...this.#souls.values()].map((s) => ({ soul: s.soul, ready: s.ready() }));
    const ok = souls.every((s) => s.ready);
    sendJson(res, ok ? 200 : 503, bearerMatches(req.headers.authorization, this.token) ? { ok, souls } : { ok });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req.url);
    if (path === undefined) return sendJson(res, 400, { error: "unreadable request target" }, true);
    if (path === "/healthz") return sendJson(res, 200, { ok: true });
    if (path === "/readyz") return this.#ready(req, res);
    const refused = this.#admit(req);
    if (refused) return sendJson(res, refused.status, { error: refused.error }, true, refused.headers);
    if (path === WHISPER_PATH) return this.#whisper(req, res);
    const target = soulTargetOf(path);
    if (!target.ok) return sendJson(res, target.status, { error: target.error }, true);
    const soul = this.#souls.get(target.id);
    if (!soul) return sendJson(res, 404, { error: `unknown soul '${target.id}' (served here: ${[...this.#souls.keys()].join(", ") || "none"})` }, true);
    const allowed = target.verb === "perceptions" ? "POST" : "GET";
    if (req.method !== allowed) return sendJson(res, 405, { error: `method not allowed; use ${allowed}` }, true, { Allow: allowed });
    if (target.verb === "perceptions") return postPerception(req, res, soul);
    if (target.verb === "speech") return streamSpeech(req, res, soul, this.#streams);
    return sendJson(res, 426, { error: "this endpoint is a WebSocket: connect with Upgrade: websocket" }, true, { Upgrade: "websocket" });
  }

  #whisper(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    const served = [...this.#souls.values()].find((s) => s.whisper);
    if (!served?.whisper) return sendJson(res, 503, { error: "no soul served here has a daimon to whisper" });
    return answerWhisper(req, res, { onWhisperRequest: served.whisper, onError: (err) => this.onError(err, "a whisper request") });
  }

  /** The upgrade listener: the socket is ours from here, so its errors are too, and nothing it does may throw. */
  #upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    // Node takes its own error listener off a socket it hands over: a client resetting now would be an uncaught error.
    socket.on("error", () => socket.destroy());
    try {
      this.#takeUpgrade(req, socket, head);
    } catch (err) {
      this.onError(err, `the WebSocket upgrade of ${String(req.url).slice(0, 200)}`);
      if (!socket.destroyed) refuseUpgrade(socket, { status: 500, error: "internal error" });
    }
  }

  #takeUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const path = pathOf(req.url);
    if (path === undefined) return refuseUpgrade(socket, { status: 400, error: "unreadable request target" });
    const refused = this.#admit(req);
    if (refused) return refuseUpgrade(socket, refused);
    const target = soulTargetOf(path);
    if (!target.ok || target.verb !== "ws") return refuseUpgrade(socket, target.ok ? { status: 404, error: "not found; the WebSocket is /v1/souls/:id/ws" } : target);
    const soul = this.#souls.get(target.id);
    const wss = this.#sockets.get(target.id);
    if (!soul || !wss) return refuseUpgrade(socket, { status: 404, error: `unknown soul '${target.id}'` });
    const release = this.#streams.take();
    if (!release) return refuseUpgrade(socket, { status: 503, error: TOO_MANY_STREAMS, headers: { "Retry-After": "5" } });
    const client = clientOf(socket);
    const limits = { streams: this.#streams, wait: () => this.#limiter.take(client) };
    // A handshake that fails (a bad key, the socket gone) never calls back: the place is given back when the socket closes.
    socket.once("close", release);
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, soul, limits, release));
  }
}

/** The client's address, for its rate limit. */
function clientOf(socket: Socket): string {
  return socket.remoteAddress ?? "unknown";
}
