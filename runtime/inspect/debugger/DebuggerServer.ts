/**
 * The debugger's server (docs/DEBUGGER.md): the page, its JSON API and its live events, for a
 * whole cluster, as one more client of the bus. It shows the souls' memory and prompts and can
 * revert them, so it is built to stay on the machine it runs on:
 *
 * - it listens on 127.0.0.1 unless told otherwise, and then answers only requests addressed
 *   to a loopback name (a web page whose DNS name is made to point at 127.0.0.1 is refused);
 * - with a token, every API call needs `Authorization: Bearer <token>` (compared in constant
 *   time) and the page needs `?token=` once; the token is never printed or logged;
 * - no CORS headers, a JSON body only for the revert, a small body limit, and a page that
 *   runs only its own script and cannot be framed.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Bus } from "../../bus/index.ts";
import { bearerDigest, bearerMatches, guardedListener, sendJson } from "../../http/index.ts";
import { componentLogger } from "../../log/index.ts";
import { serveApi, type ApiContext } from "./debuggerApi.ts";
import { EventStream } from "./EventStream.ts";
import { watchFleet, type FleetView } from "./FleetView.ts";
import { loadPageAssets } from "./pageAssets.ts";

export const DEFAULT_DEBUG_PORT = 4500;

export interface DebuggerOptions {
  /** A client of the cluster: the node's own bus, or a NATS connection of its own. */
  bus: Bus;
  /** The bus's cluster (the default); another is refused. */
  cluster?: string;
  /** Default 4500; 0 takes any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** When set, the page and the API require it (ENSOUL_DEBUG_TOKEN). */
  token?: string;
  /** Nodes to ask for their status at once (e.g. the one this process runs), so the fleet is there before the first heartbeat. */
  nodes?: readonly string[];
  /** Where a failure while serving goes (default: the log, component `debugger`). */
  onError?(err: unknown, what: string): void;
}

export interface DebuggerHandle {
  /** `http://127.0.0.1:<port>/`, without the token. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** Asks the browser to send its stored token back in the address when the page is reloaded without it. */
const RELOAD_SCRIPT = `const t=sessionStorage.getItem("ensoul.debugToken");if(t&&!new URL(location.href).searchParams.has("token"))location.replace("/?token="+encodeURIComponent(t)+location.hash);`;
const UNAUTHORIZED_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>ensoul debugger: token needed</title></head><body><p>This debugger needs its token: open it as <code>/?token=&lt;ENSOUL_DEBUG_TOKEN&gt;</code>.</p><script>${RELOAD_SCRIPT}</script></body></html>`;

const SECURITY_HEADERS = { "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store" };
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const UNAUTHORIZED_CSP = `default-src 'none'; script-src 'sha256-${createHash("sha256").update(RELOAD_SCRIPT).digest("base64")}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

function sendText(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": `${type}; charset=utf-8`, "Content-Length": String(Buffer.byteLength(body)), ...SECURITY_HEADERS, ...headers });
  res.end(body);
}

/** Whether the request names a loopback host, with our port or none. */
function loopbackHost(header: string | undefined, port: number): boolean {
  if (!header) return false;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header.trim().toLowerCase());
  return m !== null && LOOPBACK_HOSTS.has(m[1] as string) && (m[2] === undefined || Number(m[2]) === port);
}

class DebuggerServer {
  readonly #server: Server;
  readonly #digest: Buffer | undefined;
  #port = 0;

  constructor(
    private readonly api: ApiContext,
    private readonly loopbackOnly: boolean,
    token: string | undefined,
    private readonly onError: (err: unknown, what: string) => void,
  ) {
    this.#digest = token === undefined ? undefined : bearerDigest(token);
    this.#server = createServer(guardedListener((req, res) => this.#handle(req, res), onError));
  }

  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(port, host, () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    // Once listening, a server error (accept failing for want of file descriptors) is reported; the server goes on.
    this.#server.on("error", (err) => this.onError(err, "the debugger's server"));
    this.#port = (this.#server.address() as AddressInfo).port;
    return this.#port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  #authorized(header: string | undefined): boolean {
    return this.#digest === undefined || bearerMatches(header, this.#digest);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.loopbackOnly && !loopbackHost(req.headers.host, this.#port)) return sendJson(res, 403, { error: "this debugger answers only requests to 127.0.0.1 or localhost" }, true);
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://debugger");
    } catch {
      return sendJson(res, 400, { error: "unreadable request path" }, true);
    }
    const path = url.pathname;
    if (path.startsWith("/api/")) {
      if (!this.#authorized(req.headers.authorization)) return sendJson(res, 401, { error: "missing or wrong bearer token (ENSOUL_DEBUG_TOKEN)" }, true, { "WWW-Authenticate": 'Bearer realm="ensoul-debugger"' });
      return serveApi(req, res, url, this.api);
    }
    if (path === "/" || path === "/app.js" || path === "/app.css") return this.#page(req, res, url);
    sendJson(res, 404, { error: "not found; see docs/DEBUGGER.md for the endpoints" });
  }

  /** The page's files. Only the HTML needs the token: the script and the style hold no data. */
  async #page(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (req.method !== "GET") return sendJson(res, 405, { error: "method not allowed; use GET" }, true, { Allow: "GET" });
    if (url.pathname === "/") {
      const token = url.searchParams.get("token");
      if (!this.#authorized(token !== null ? `Bearer ${token}` : req.headers.authorization)) {
        return sendText(res, 401, "text/html", UNAUTHORIZED_PAGE, { "Content-Security-Policy": UNAUTHORIZED_CSP });
      }
    }
    let assets: Awaited<ReturnType<typeof loadPageAssets>>;
    try {
      assets = await loadPageAssets();
    } catch (err) {
      this.onError(err, "loading the debugger page");
      return sendJson(res, 500, { error: `the debugger page could not be loaded: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}` });
    }
    if (url.pathname === "/app.js") return sendText(res, 200, "text/javascript", assets.js);
    if (url.pathname === "/app.css") return sendText(res, 200, "text/css", assets.css);
    sendText(res, 200, "text/html", assets.html, { "Content-Security-Policy": PAGE_CSP });
  }
}

/** Starts the debugger; the port must be free (the error of `listen` otherwise, e.g. EADDRINUSE). */
export async function startDebugger(options: DebuggerOptions): Promise<DebuggerHandle> {
  const { bus } = options;
  const cluster = options.cluster ?? bus.cluster;
  // Node control requests go out in the bus's own namespace: watching another cluster's would show souls it cannot reach.
  if (cluster !== bus.cluster) throw new Error(`the debugger's cluster '${cluster}' is not the bus's ('${bus.cluster}')`);
  const host = options.host ?? "127.0.0.1";
  if (options.token !== undefined && options.token.trim() === "") throw new Error("the debugger's token must not be empty");
  const log = componentLogger("debugger");
  const onError = options.onError ?? ((err: unknown, what: string) => log.error(`${what}: ${err instanceof Error ? err.message : String(err)}`));
  const events = new EventStream(bus, cluster, { onError });
  let fleet: FleetView | undefined;
  try {
    fleet = await watchFleet(bus, cluster, { onChange: (soul) => events.publish("fleet", { soulId: soul.id, soul }), ...(options.nodes ? { ask: options.nodes } : {}) });
    const server = new DebuggerServer({ bus, fleet, events }, LOOPBACK_HOSTS.has(host), options.token, onError);
    const port = await server.listen(options.port ?? DEFAULT_DEBUG_PORT, host);
    // The page is bundled on first use from the sources; start now so the first visit does not wait.
    void loadPageAssets().catch(() => undefined);
    const shown = host.includes(":") ? `[${host}]` : host;
    const watching = fleet;
    let stopping: Promise<void> | undefined;
    return {
      url: `http://${shown}:${port}/`,
      port,
      stop() {
        stopping ??= (async () => {
          watching.stop();
          events.close();
          await server.close();
        })();
        return stopping;
      },
    };
  } catch (err) {
    fleet?.stop();
    events.close();
    throw err;
  }
}
