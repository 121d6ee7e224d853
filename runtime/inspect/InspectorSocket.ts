import { connect as netConnect, isIP, type createConnection, type NetConnectOpts, type Socket } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import type { StatelyInspectionEvent } from "@statelyai/inspect";
import WebSocket from "ws";
import { sanitizeValue } from "./sanitize.ts";

/**
 * The WebSocket end of a Stately inspector: an `Adapter` for @statelyai/inspect's
 * `createInspector`, sending each inspection event as one JSON text message, exactly as the
 * library's own WebSocket inspector does, so its `createInspectorServer` relay (and anything
 * else that speaks that protocol) receives the same thing.
 *
 * ensoul does not use the library's `createWebSocketInspector` adapter because of how it ends:
 * closing a socket that is still connecting raises an error, its error handler reconnects
 * five seconds later, and nothing can cancel that; so a stopped inspector could come back
 * and hold the process open for good. Here `stop()` really stops, reconnect timers are
 * cancelled, and neither the socket nor a timer is ever what keeps a process alive: an
 * inspector is an observer.
 */
export class InspectorSocket {
  readonly url: string;
  readonly #maxQueued: number;
  #ws: WebSocket | undefined;
  #queue: string[] = [];
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;
  #attempts = 0;
  #closing: Promise<void> | undefined;
  readonly #opened: Promise<void>;
  #markOpened!: () => void;

  constructor(url: string, options: { maxQueued?: number } = {}) {
    this.url = url;
    this.#maxQueued = options.maxQueued ?? 1000;
    this.#opened = new Promise<void>((resolve) => (this.#markOpened = resolve));
  }

  /** Resolves once the socket has opened (or the inspector was stopped before it could). */
  ready(): Promise<void> {
    return this.#opened;
  }

  get connected(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN;
  }

  start(): void {
    if (this.#stopped || this.#ws) return;
    this.#connect();
  }

  /** Events before the socket opens (or while it reconnects) wait, the oldest dropped past the bound. */
  send(event: StatelyInspectionEvent): void {
    if (this.#stopped) return;
    let text: string;
    try {
      text = JSON.stringify(sanitizeValue(event));
    } catch {
      return; // An event that cannot be shown is not worth breaking the soul over.
    }
    const ws = this.#ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(text);
      return;
    }
    this.#queue.push(text);
    if (this.#queue.length > this.#maxQueued) this.#queue.shift();
  }

  /** Sends what is already on its way, then closes; resolves when the socket is gone. */
  stop(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    // The inspector hands events over a timer tick after they happen: let those in first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#stopped = true;
    this.#markOpened();
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#queue = [];
    const ws = this.#ws;
    this.#ws = undefined;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    if (ws.readyState !== WebSocket.OPEN) {
      ws.terminate();
      return;
    }
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => ws.terminate(), 1000);
      force.unref();
      ws.once("close", () => {
        clearTimeout(force);
        resolve();
      });
      ws.close(1000, "inspector stopped");
    });
  }

  #connect(): void {
    const ws = new WebSocket(this.url, { createConnection: unrefConnection(this.url) });
    this.#ws = ws;
    ws.on("open", () => {
      this.#attempts = 0;
      const queued = this.#queue;
      this.#queue = [];
      for (const text of queued) ws.send(text);
      this.#markOpened();
    });
    // A failed connection also closes; `close` decides what happens next.
    ws.on("error", () => undefined);
    ws.on("close", () => {
      if (this.#ws !== ws) return;
      this.#ws = undefined;
      if (!this.#stopped) this.#reconnectLater();
    });
  }

  #reconnectLater(): void {
    const delay = Math.min(250 * 2 ** this.#attempts++, 5000);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#stopped) this.#connect();
    }, delay);
    this.#retry.unref();
  }
}

/** ws's own connection functions, with the socket unref'd: a live inspector never keeps the process running. */
function unrefConnection(url: string): typeof createConnection {
  const secure = url.startsWith("wss:");
  const connection = (options: NetConnectOpts & ConnectionOptions): Socket => {
    let socket: Socket;
    if (secure) {
      const tls: ConnectionOptions = { ...options, path: undefined } as ConnectionOptions;
      if (!tls.servername && tls.servername !== "") tls.servername = isIP(tls.host ?? "") ? "" : tls.host;
      socket = tlsConnect(tls);
    } else {
      const net = { ...options } as NetConnectOpts & { socketPath?: string; path?: string };
      net.path = net.socketPath;
      socket = netConnect(net as NetConnectOpts);
    }
    socket.unref();
    return socket;
  };
  return connection as typeof createConnection;
}
