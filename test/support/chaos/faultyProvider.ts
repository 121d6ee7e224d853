/**
 * A provider wire server that fails a seeded share of calls, for the provider-faults chaos
 * scenario. It wraps a ScriptedServer (anthropicServer.ts, groqServer.ts): a small HTTP front
 * draws each call's fate from a seeded PRNG in arrival order, answers garbage itself (the
 * ScriptedServer only speaks well-formed wire), and forwards everything else to the scripted
 * server with the fate in a header, where a handler turns it into a Behaviour (a 429 with
 * retry-after, a 500, a hang before the headers or a stream that stalls after its first chunk,
 * an SSE stream cut after some chunks, or a clean answer). The
 * real SDKs talk to the front over real HTTP, so their own parsing and error classes are what
 * is exercised.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Behaviour, RecordedRequest, ScriptedServer } from "../wire/scriptedServer.ts";
import { pick, seededRandom } from "../seededRandom.ts";

export const PROVIDER_FAULTS = ["rate_limit", "server_error", "hang", "cut_stream", "garbage"] as const;
export type ProviderFault = (typeof PROVIDER_FAULTS)[number];

const FATE_HEADER = "x-chaos-fate";

export interface FaultyProviderOptions {
  seed: number;
  /** Share of calls that fail, in [0, 1]. */
  rate: number;
  /** The clean answer to a call (the scripted server's request, as recorded). */
  answer(request: RecordedRequest): string;
}

export interface FaultyProvider {
  /** Base URL to give the SDK. */
  readonly url: string;
  /** Calls that reached the front, faulty or not. */
  readonly calls: number;
  readonly faults: Readonly<Record<ProviderFault, number>>;
  /** While set, every call is answered cleanly and not counted as a fault (the outage is over). */
  quiet: boolean;
  close(): Promise<void>;
}

/** Bodies a broken gateway or proxy might send with a 200: none of them is an answer. */
const GARBAGE: ReadonlyArray<{ type: string; body: string }> = [
  { type: "text/event-stream", body: 'event: message_start\ndata: {"type":"message_start","mess\n\ndata: \u0000\u0001\u00ff}}}\n\n' },
  { type: "text/html", body: "<html><body><h1>502 Bad Gateway</h1></body></html>" },
  { type: "application/json", body: '{"status":"ok","choices":"no","content":42}' },
  { type: "text/event-stream", body: "data: [DONE]\n\n" },
];

export async function startFaultyProvider(backend: ScriptedServer, options: FaultyProviderOptions): Promise<FaultyProvider> {
  const random = seededRandom(options.seed);
  const faults = Object.fromEntries(PROVIDER_FAULTS.map((k) => [k, 0])) as Record<ProviderFault, number>;
  let calls = 0;
  const sockets = new Set<Socket>();

  backend.handle((request) => {
    const fate = String(request.headers[FATE_HEADER] ?? "clean");
    const text = options.answer(request);
    switch (fate) {
      case "rate_limit":
        return { type: "error", status: 429, retryAfter: "1", message: "chaos: rate limited" } satisfies Behaviour;
      case "server_error":
        return { type: "error", status: 500, message: "chaos: internal error" };
      case "hang":
        return { type: "hang" };
      case "stall":
        // Headers and a first chunk, then nothing for far longer than any client deadline.
        return { type: "reply", text, chunkDelayMs: 60_000 };
      case "cut_stream":
        // Midway: the client already holds at least one chunk, so nothing may fall through silently.
        return { type: "disconnect", text, afterChunks: Math.max(1, Math.floor(text.split(" ").length / 2)) };
      default:
        return { type: "reply", text };
    }
  });

  const front: Server = createServer((req, res) => {
    void serve(req, res).catch(() => res.destroy());
  });
  front.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  const state: FaultyProvider = {
    get url() {
      return `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    },
    get calls() {
      return calls;
    },
    faults,
    quiet: false,
    async close() {
      for (const socket of sockets) socket.destroy();
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on("error", () => undefined);
    const body = await readBody(req);
    calls++;
    // Drawn even while quiet, so the sequence of fates does not depend on when the quiet began.
    const failing = random() < options.rate;
    const kind = pick(random, PROVIDER_FAULTS);
    const variant = random();
    const fate = failing && !state.quiet ? kind : "clean";
    if (fate !== "clean") faults[fate]++;
    if (fate === "garbage") {
      const garbage = GARBAGE[Math.floor(variant * GARBAGE.length)]!;
      res.writeHead(200, { "content-type": garbage.type, "content-length": Buffer.byteLength(garbage.body) });
      res.end(garbage.body);
      return;
    }
    // Half the hangs are silent from the start, half stall after the first chunks of a stream.
    forward(req, res, body, fate === "hang" && variant < 0.5 ? "stall" : fate);
  }

  /** To the scripted server and back, byte for byte; a socket it destroys is destroyed here too. */
  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, fate: string): void {
    const target = new URL(backend.url);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, [FATE_HEADER]: fate } },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.on("data", (chunk: Buffer) => res.write(chunk));
        reply.on("end", () => res.end());
        reply.on("aborted", () => res.destroy());
        reply.on("error", () => res.destroy());
      },
    );
    upstream.on("error", () => res.destroy());
    // The client gave up (its deadline): the scripted server's hang must not outlive it.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  }

  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return state;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}
