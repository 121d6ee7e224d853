/**
 * `ensoul up --metrics [host:]port`: the metrics over HTTP for Prometheus to scrape,
 * `GET /metrics` and nothing else. On 127.0.0.1 unless a host is given: the numbers name
 * souls and models, which is nobody's business outside the machine until the operator says so.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface MetricsAddress {
  host: string;
  /** 0: any free port (tests). */
  port: number;
}

export class MetricsAddressError extends Error {
  constructor(value: string) {
    super(`--metrics takes a port (0-65535) or host:port, e.g. 9464 or 0.0.0.0:9464; got '${value.slice(0, 80)}'`);
    this.name = "MetricsAddressError";
  }
}

export function parseMetricsAddress(value: string): MetricsAddress {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65_535)) throw new MetricsAddressError(value);
  return { host: m[1]?.replace(/^\[|\]$/g, "") ?? "127.0.0.1", port };
}

export interface MetricsSource {
  text(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function serveMetrics(source: MetricsSource, address: MetricsAddress, onError?: (err: unknown) => void): Promise<MetricsServer> {
  // Nothing a scrape does may throw out of its listener or be left floating: it is answered and reported.
  const failed = (res: ServerResponse) => (err: unknown) => {
    onError?.(err);
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("could not collect the metrics\n");
    else res.destroy();
  };
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found: the metrics are at GET /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("method not allowed: GET /metrics\n");
      return;
    }
    source
      .text()
      .then((text) => void res.writeHead(200, { "content-type": source.contentType }).end(req.method === "HEAD" ? undefined : text))
      .catch(failed(res));
  };
  const server: Server = createServer((req, res) => {
    res.on("error", () => undefined);
    try {
      answer(req, res);
    } catch (err) {
      failed(res)(err);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Once listening, a server error (accept failing for want of file descriptors) is reported; the server goes on.
  server.on("error", (err) => onError?.(err));
  const port = (server.address() as AddressInfo).port;
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
