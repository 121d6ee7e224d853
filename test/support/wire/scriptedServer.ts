/**
 * A scriptable local HTTP server for provider tests. The real SDKs talk to it over real HTTP
 * (127.0.0.1, port 0), so tests exercise the SDKs' own request building, SSE parsing and
 * error classes. What differs between wire formats (paths, JSON shapes, SSE frames, error
 * bodies) lives in a `WireDialect`; this file holds the plumbing both dialects share:
 * scripting, recording, delays, disconnects and hangs.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface UsagePlan {
  inputTokens?: number;
  outputTokens?: number;
}

interface StreamedText {
  text: string;
  /** Explicit chunks; by default the text is split at word boundaries. */
  chunks?: readonly string[];
  /** Pause between chunks, so tests can watch them arrive one by one. */
  chunkDelayMs?: number;
}

/** A tool call the scripted model makes (sent in JSON replies; the adapters fetch tool answers whole). */
export interface ScriptedToolCall {
  id: string;
  name: string;
  input: unknown;
  /** OpenAI format only: the `arguments` string as sent, instead of `input` as JSON (e.g. broken JSON). */
  rawArguments?: string;
}

/** What the server does with one request. */
export type Behaviour =
  | ({
      type: "reply";
      /** Wait for this before anything else (a barrier: tests of parallel requests hold every answer until all have arrived). */
      after?: Promise<unknown>;
      /** Pause before the response headers. */
      delayMs?: number;
      usage?: UsagePlan;
      /** Leave usage out of the answer (tests the client's estimate). */
      omitUsage?: boolean;
      stopReason?: string;
      model?: string;
      /** Tool calls in the answer; the stop reason defaults to the API's tool-use one. */
      toolCalls?: readonly ScriptedToolCall[];
    } & StreamedText)
  | {
      type: "error";
      status: number;
      message?: string;
      /** The error body's `type`; defaults to the API's type for the status. */
      errorType?: string;
      /** Sent as the `retry-after` header (seconds, as the APIs send it). */
      retryAfter?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Streams `afterChunks` chunks, then destroys the socket. Non-streaming: destroys it at once. */
  | ({ type: "disconnect"; afterChunks: number; delayMs?: number } & StreamedText)
  /** Streams `afterChunks` chunks, then ends the body cleanly without the closing events. */
  | ({ type: "truncate"; afterChunks: number } & StreamedText)
  /** Streams `afterChunks` chunks, then an in-stream error event. */
  | ({ type: "streamError"; afterChunks: number; errorType: string; message?: string } & StreamedText)
  /** Never answers (until the server closes). */
  | { type: "hang" };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: Record<string, unknown> | undefined;
  rawBody: string;
  stream: boolean;
  /** `performance.now()` when the request arrived. */
  at: number;
  /** Set when the client hung up before the response was complete (an abort or timeout). */
  clientClosedEarly: boolean;
}

/** Everything an SSE reply needs, worked out once per request. */
export interface ReplyPlan {
  id: string;
  model: string;
  text: string;
  chunks: string[];
  inputTokens: number;
  outputTokens: number;
  includeUsage: boolean;
  stopReason: string;
  toolCalls: readonly ScriptedToolCall[];
}

export interface WireDialect {
  /** The POST path the SDK calls, relative to its base URL. */
  path: string;
  json(plan: ReplyPlan): unknown;
  /** Whole SSE frames (`event:`/`data:` lines and the blank line). */
  prelude(plan: ReplyPlan): string[];
  chunk(text: string, index: number, plan: ReplyPlan): string;
  epilogue(plan: ReplyPlan): string[];
  streamError(errorType: string, message: string): string;
  errorBody(status: number, message: string, errorType?: string): unknown;
}

export type BehaviourHandler = (request: RecordedRequest, index: number) => Behaviour | undefined;

/** Splits "Hello brave world" into "Hello", " brave", " world": joined, they are the text again. */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+/g) ?? (text ? [text] : []);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ScriptedServer {
  readonly requests: RecordedRequest[] = [];
  readonly #dialect: WireDialect;
  readonly #queue: Behaviour[] = [];
  #handler: BehaviourHandler | undefined;
  #fallback: Behaviour = { type: "reply", text: "ok" };
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #count = 0;

  constructor(dialect: WireDialect) {
    this.#dialect = dialect;
  }

  static async start(dialect: WireDialect): Promise<ScriptedServer> {
    const s = new ScriptedServer(dialect);
    await s.#listen();
    return s;
  }

  /** Base URL to give the SDK. */
  get url(): string {
    const address = this.#server?.address() as AddressInfo | null;
    if (!address) throw new Error("server not listening");
    return `http://127.0.0.1:${address.port}`;
  }

  /** Behaviours for the next requests, one each, in order. */
  enqueue(...behaviours: Behaviour[]): this {
    this.#queue.push(...behaviours);
    return this;
  }

  /** Decides for requests the queue does not cover (e.g. by the requested model). */
  handle(handler: BehaviourHandler | undefined): this {
    this.#handler = handler;
    return this;
  }

  /** Behaviours enqueued but not yet used: a test can assert that a retry did not happen. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Forgets recorded requests and scripting, for a fresh test on a shared server. */
  reset(): this {
    this.requests.length = 0;
    this.#queue.length = 0;
    this.#handler = undefined;
    this.#fallback = { type: "reply", text: "ok" };
    return this;
  }

  /** What requests get when neither the queue nor the handler decides. */
  otherwise(behaviour: Behaviour): this {
    this.#fallback = behaviour;
    return this;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #listen(): Promise<void> {
    const server = createServer((req, res) => {
      void this.#serve(req, res).catch(() => res.destroy());
    });
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.#server = server;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on("error", () => undefined);
    const rawBody = await readBody(req);
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(rawBody);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path,
      headers: req.headers,
      body,
      rawBody,
      stream: body?.["stream"] === true,
      at: performance.now(),
      clientClosedEarly: false,
    };
    this.requests.push(recorded);
    res.on("close", () => {
      if (!res.writableFinished) recorded.clientClosedEarly = true;
    });
    const index = this.#count++;

    if (req.method !== "POST" || path !== this.#dialect.path) {
      return this.#sendError(res, { type: "error", status: 404, message: `no route for ${req.method} ${path}` });
    }
    if (!body) return this.#sendError(res, { type: "error", status: 400, message: "body is not a JSON object" });

    const behaviour = this.#queue.shift() ?? this.#handler?.(recorded, index) ?? this.#fallback;
    if (behaviour.type === "hang") return;
    if ("after" in behaviour && behaviour.after) await behaviour.after;
    if ("delayMs" in behaviour && behaviour.delayMs) await sleep(behaviour.delayMs);
    if (res.destroyed) return;

    switch (behaviour.type) {
      case "error":
        return this.#sendError(res, behaviour);
      case "reply":
        return recorded.stream ? this.#sendStream(res, behaviour, recorded, "complete") : this.#sendJson(res, behaviour, recorded);
      case "disconnect":
        if (!recorded.stream) {
          res.socket?.destroy();
          return;
        }
        return this.#sendStream(res, behaviour, recorded, "disconnect", behaviour.afterChunks);
      case "truncate":
        return this.#sendStream(res, behaviour, recorded, "truncate", behaviour.afterChunks);
      case "streamError":
        return this.#sendStream(res, behaviour, recorded, "error", behaviour.afterChunks, behaviour);
    }
  }

  #plan(
    b: StreamedText & { usage?: UsagePlan; omitUsage?: boolean; stopReason?: string; model?: string; toolCalls?: readonly ScriptedToolCall[] },
    req: RecordedRequest,
  ): ReplyPlan {
    const chunks = b.chunks ? [...b.chunks] : wordChunks(b.text);
    const messages = JSON.stringify(req.body?.["messages"] ?? []);
    return {
      id: `${this.#count}`,
      model: b.model ?? String(req.body?.["model"] ?? "unknown"),
      text: b.text,
      chunks,
      // Deterministic defaults so tests can also assert on usage they did not script.
      inputTokens: b.usage?.inputTokens ?? Math.ceil(messages.length / 4),
      outputTokens: b.usage?.outputTokens ?? chunks.length,
      includeUsage: !b.omitUsage,
      stopReason: b.stopReason ?? "",
      toolCalls: b.toolCalls ?? [],
    };
  }

  #sendJson(res: ServerResponse, b: Extract<Behaviour, { type: "reply" }>, req: RecordedRequest): void {
    const payload = JSON.stringify(this.#dialect.json(this.#plan(b, req)));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
    res.end(payload);
  }

  async #sendStream(
    res: ServerResponse,
    b: StreamedText & { usage?: UsagePlan; omitUsage?: boolean; stopReason?: string; model?: string },
    req: RecordedRequest,
    ending: "complete" | "disconnect" | "truncate" | "error",
    afterChunks = Number.POSITIVE_INFINITY,
    error?: { errorType: string; message?: string },
  ): Promise<void> {
    const plan = this.#plan(b, req);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    for (const frame of this.#dialect.prelude(plan)) await write(res, frame);
    const count = Math.min(afterChunks, plan.chunks.length);
    for (let i = 0; i < count; i++) {
      if (i > 0 && b.chunkDelayMs) await sleep(b.chunkDelayMs);
      if (res.destroyed) return;
      await write(res, this.#dialect.chunk(plan.chunks[i] ?? "", i, plan));
    }
    if (ending === "disconnect") {
      // Written and flushed first, so the client really holds the chunks before the socket dies.
      res.socket?.destroy();
      return;
    }
    if (ending === "error" && error) {
      await write(res, this.#dialect.streamError(error.errorType, error.message ?? error.errorType));
    }
    if (ending === "complete") {
      for (const frame of this.#dialect.epilogue(plan)) await write(res, frame);
    }
    res.end();
  }

  #sendError(res: ServerResponse, b: Extract<Behaviour, { type: "error" }>): void {
    const payload = JSON.stringify(this.#dialect.errorBody(b.status, b.message ?? `status ${b.status}`, b.errorType));
    res.writeHead(b.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      ...(b.retryAfter !== undefined ? { "retry-after": b.retryAfter } : {}),
      ...b.headers,
    });
    res.end(payload);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function write(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(data, () => resolve());
  });
}

/** One SSE frame. */
export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`;
}
