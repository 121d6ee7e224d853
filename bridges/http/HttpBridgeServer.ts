/**
 * The HTTP bridge's server: one per host and port, shared by every `http` bridge the node runs
 * there (one per soul), so two souls can be served on one port. Health checks are open;
 * everything else needs `Authorization: Bearer <ENSOUL_HTTP_TOKEN>`, compared in constant time.
 * Floods get 429 per client address before any work is done.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer } from "ws";
import { answerWhisper, WHISPER_PATH, type WhisperRequestHandler } from "../../actors/daimon/index.ts";
import { bearerDigest, bearerMatches, sendJson } from "../../runtime/http/index.ts";
import { postPerception, serveSocket, streamSpeech, type HttpSoulRoute } from "./httpRoutes.ts";
import { RateLimiter } from "./rateLimiter.ts";

export interface ServedSoul extends HttpSoulRoute {
  whisper?: WhisperRequestHandler;
  /** Ready: the soul's bridge is online. */
  ready(): boolean;
}

const SOUL_PATH = /^\/v1\/souls\/([^/]+)\/(perceptions|speech|ws)$/;

export class HttpBridgeServer {
  readonly #souls = new Map<string, ServedSoul>();
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  #server!: Server;
  #limiter: RateLimiter;
  #url = "";

  private constructor(
    private readonly token: Buffer,
    rateLimit: { perMinute: number; burst: number },
    private readonly onError: (err: unknown, what: string) => void,
  ) {
    this.#limiter = new RateLimiter(rateLimit.burst, rateLimit.perMinute);
  }

  static async listen(o: { host: string; port: number; token: string; rateLimit: { perMinute: number; burst: number }; onError(err: unknown, what: string): void }): Promise<HttpBridgeServer> {
    const server = new HttpBridgeServer(bearerDigest(o.token), o.rateLimit, o.onError);
    server.#server = createServer((req, res) => {
      server.#handle(req, res).catch((err: unknown) => {
        o.onError(err, `${req.method} ${req.url}`);
        sendJson(res, 500, { error: "internal error" }, true);
      });
    });
    server.#server.on("upgrade", (req, socket: Socket, head) => server.#upgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.#server.once("error", reject);
      server.#server.listen(o.port, o.host, () => {
        server.#server.off("error", reject);
        resolve();
      });
    });
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

  add(soul: ServedSoul): void {
    if (this.#souls.has(soul.soul)) throw new Error(`soul '${soul.soul}' already has an http bridge on ${this.url}`);
    this.#souls.set(soul.soul, soul);
  }

  remove(soulId: string): void {
    this.#souls.delete(soulId);
  }

  async close(): Promise<void> {
    for (const ws of this.#wss.clients) ws.close(1001, "the bridge is stopping");
    this.#wss.close();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  /** Refuses what is not allowed before any work: unauthenticated, flooding, unknown souls. */
  #admit(req: IncomingMessage): { status: number; error: string; headers?: Record<string, string> } | undefined {
    if (!bearerMatches(req.headers.authorization, this.token)) return { status: 401, error: "missing or invalid bearer token", headers: { "WWW-Authenticate": 'Bearer realm="ensoul"' } };
    const wait = this.#limiter.take(req.socket.remoteAddress ?? "unknown");
    if (wait > 0) return { status: 429, error: `too many requests; retry in ${Math.ceil(wait / 1000)} s`, headers: { "Retry-After": String(Math.ceil(wait / 1000)) } };
    return undefined;
  }

  #soulOf(path: string): { soul: ServedSoul | undefined; id: string; verb: string } | undefined {
    const m = SOUL_PATH.exec(path);
    if (!m) return undefined;
    const id = decodeURIComponent(m[1] as string);
    return { soul: this.#souls.get(id), id, verb: m[2] as string };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://bridge").pathname;
    if (path === "/healthz") return sendJson(res, 200, { ok: true });
    if (path === "/readyz") {
      const souls = [...this.#souls.values()].map((s) => ({ soul: s.soul, ready: s.ready() }));
      return sendJson(res, souls.every((s) => s.ready) ? 200 : 503, { ok: souls.every((s) => s.ready), souls });
    }
    const refused = this.#admit(req);
    if (refused) return sendJson(res, refused.status, { error: refused.error }, true, refused.headers);
    if (path === WHISPER_PATH) return this.#whisper(req, res);
    const target = this.#soulOf(path);
    if (!target) return sendJson(res, 404, { error: "not found; see docs/HTTP.md for the endpoints" }, true);
    if (!target.soul) return sendJson(res, 404, { error: `unknown soul '${target.id}' (served here: ${[...this.#souls.keys()].join(", ") || "none"})` }, true);
    const allowed = target.verb === "perceptions" ? "POST" : "GET";
    if (req.method !== allowed) return sendJson(res, 405, { error: `method not allowed; use ${allowed}` }, true, { Allow: allowed });
    if (target.verb === "perceptions") return postPerception(req, res, target.soul);
    if (target.verb === "speech") return streamSpeech(req, res, target.soul);
    return sendJson(res, 426, { error: "this endpoint is a WebSocket: connect with Upgrade: websocket" }, true, { Upgrade: "websocket" });
  }

  #whisper(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    const served = [...this.#souls.values()].find((s) => s.whisper);
    if (!served?.whisper) return sendJson(res, 503, { error: "no soul served here has a daimon to whisper" });
    return answerWhisper(req, res, { onWhisperRequest: served.whisper, onError: (err) => this.onError(err, "a whisper request") });
  }

  #upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const reject = (status: number, error: string) => {
      const body = JSON.stringify({ error });
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : status === 429 ? "Too Many Requests" : "Not Found"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    };
    const refused = this.#admit(req);
    if (refused) return reject(refused.status, refused.error);
    const target = this.#soulOf(new URL(req.url ?? "/", "http://bridge").pathname);
    if (!target || target.verb !== "ws") return reject(404, "not found; the WebSocket is /v1/souls/:id/ws");
    const soul = target.soul;
    if (!soul) return reject(404, `unknown soul '${target.id}'`);
    this.#wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, soul));
  }
}
