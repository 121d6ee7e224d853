/**
 * The Socket Mode side of the fake: the WebSocket that `apps.connections.open` points to.
 * Speaks what node_modules/@slack/socket-mode/dist/src/SocketModeClient.js and
 * SlackWebSocket.js expect (docs.slack.dev/apis/events-api/using-socket-mode): a
 * `{type:"hello", num_connections, debug_info, connection_info}` message on connect (the client
 * counts itself connected only then), envelopes the client acks by sending back
 * `{envelope_id, payload}`, `{type:"disconnect", reason, debug_info}` asking the client to
 * reconnect, and WebSocket ping/pong (the `ws` server answers the client's pings; with
 * `serverPingIntervalMs` it also pings, which starts the client's server-ping watchdog).
 */
import type { IncomingMessage } from "node:http";
import { randomUUID } from "node:crypto";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import type { EventsApiEnvelope } from "./events.ts";
import type { SlackState } from "./state.ts";

export const SOCKET_PATH = "/socket-mode";

/** What the client sent back for one envelope. */
export interface EnvelopeAck {
  envelope_id: string;
  payload?: unknown;
  /** Which connection (1, 2, ...) the ack came on. */
  connection: number;
}

interface PendingAck {
  resolve(ack: EnvelopeAck): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface Connection {
  id: number;
  socket: WebSocket;
}

export class FakeSocketMode {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly tickets = new Set<string>();
  private readonly open = new Map<WebSocket, Connection>();
  private readonly pending = new Map<string, PendingAck>();
  private readonly waiters = new Set<(c: Connection) => void>();
  private readonly acked: EnvelopeAck[] = [];
  private pingTimer: NodeJS.Timeout | undefined;
  private total = 0;
  /** Pings the clients sent (the SDK pings every clientPingTimeout / 3). */
  clientPings = 0;

  constructor(
    private readonly state: SlackState,
    serverPingIntervalMs?: number,
  ) {
    if (serverPingIntervalMs) this.pingTimer = setInterval(() => this.pingAll(), serverPingIntervalMs);
  }

  /** A fresh single-use URL for `apps.connections.open`. */
  issueUrl(origin: string): string {
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return `${origin.replace(/^http/, "ws")}${SOCKET_PATH}?ticket=${ticket}&app_id=${this.state.identity.appId}`;
  }

  /** The HTTP server's `upgrade` handler: accepts only a path with an unused ticket. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://fake.slack");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== SOCKET_PATH || !this.tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  private accept(socket: WebSocket): void {
    this.total += 1;
    const connection = { id: this.total, socket };
    this.open.set(socket, connection);
    socket.on("message", (data, isBinary) => this.onMessage(connection, data, isBinary));
    socket.on("ping", () => (this.clientPings += 1));
    socket.on("close", () => {
      this.open.delete(socket);
      this.state.changed();
    });
    socket.on("error", () => socket.terminate());
    socket.send(JSON.stringify(this.hello()));
    for (const waiter of [...this.waiters]) waiter(connection);
    this.state.changed();
  }

  private hello(): Record<string, unknown> {
    return {
      type: "hello",
      num_connections: this.open.size,
      debug_info: { host: "fake", build_number: 1, approximate_connection_time: 18060 },
      connection_info: { app_id: this.state.identity.appId },
    };
  }

  private onMessage(connection: Connection, data: RawData, isBinary: boolean): void {
    if (isBinary) return;
    let message: { envelope_id?: unknown; payload?: unknown };
    try {
      message = JSON.parse(data.toString()) as typeof message;
    } catch {
      return;
    }
    if (typeof message.envelope_id !== "string") return;
    const ack: EnvelopeAck = { envelope_id: message.envelope_id, payload: message.payload, connection: connection.id };
    this.acked.push(ack);
    const pending = this.pending.get(ack.envelope_id);
    if (pending) {
      this.pending.delete(ack.envelope_id);
      clearTimeout(pending.timer);
      pending.resolve(ack);
    }
    this.state.changed();
  }

  /** Connections accepted so far (reconnects count anew). */
  get totalConnections(): number {
    return this.total;
  }

  get openConnections(): number {
    return this.open.size;
  }

  acks(): EnvelopeAck[] {
    return [...this.acked];
  }

  /** Resolves on the next connection (after its hello was sent). */
  nextConnection(timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const waiter = (c: Connection) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(c.id);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`fake Slack: no Socket Mode connection within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** The newest open connection, waiting for one (within `timeoutMs`) when none is open. */
  private async target(timeoutMs: number): Promise<Connection> {
    const newest = [...this.open.values()].pop();
    if (newest) return newest;
    const id = await this.nextConnection(timeoutMs);
    const found = [...this.open.values()].find((c) => c.id === id);
    if (!found) throw new Error("fake Slack: the Socket Mode connection closed before the envelope could be sent");
    return found;
  }

  /** Sends an envelope; resolves with the client's ack, rejects after `timeoutMs` without one. */
  async deliver(envelope: EventsApiEnvelope | Record<string, unknown> & { envelope_id: string }, timeoutMs: number): Promise<EnvelopeAck> {
    const started = Date.now();
    const connection = await this.target(timeoutMs);
    return new Promise((resolve, reject) => {
      const left = Math.max(1, timeoutMs - (Date.now() - started));
      const timer = setTimeout(() => {
        this.pending.delete(envelope.envelope_id);
        reject(new Error(`fake Slack: envelope ${envelope.envelope_id} was not acked within ${timeoutMs} ms`));
      }, left);
      this.pending.set(envelope.envelope_id, { resolve, reject, timer });
      connection.socket.send(JSON.stringify(envelope));
    });
  }

  /** Asks every client to reconnect, as Slack does before recycling a server. */
  disconnect(reason: string): void {
    const message = JSON.stringify({ type: "disconnect", reason, debug_info: { host: "fake" } });
    for (const { socket } of this.open.values()) socket.send(message);
  }

  /** Cuts every socket without a close handshake. */
  drop(): void {
    for (const { socket } of this.open.values()) socket.terminate();
  }

  private pingAll(): void {
    for (const { socket } of this.open.values()) socket.ping(Buffer.from("fake-slack-ping"));
  }

  async close(): Promise<void> {
    clearInterval(this.pingTimer);
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`fake Slack closed before envelope ${id} was acked`));
    }
    this.pending.clear();
    await this.closeSockets();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /**
   * Closes every socket with a close frame (1001, "going away") and waits for the handshake, so a
   * client that is itself shutting down sees a clean close rather than an error; a socket still
   * open after `graceMs` is terminated.
   */
  private async closeSockets(graceMs = 500): Promise<void> {
    const sockets = [...this.open.keys()];
    const closed = sockets.map((socket) => new Promise<void>((resolve) => socket.once("close", () => resolve())));
    for (const socket of sockets) socket.close(1001, "fake Slack closing");
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all(closed), grace]);
    clearTimeout(timer);
    for (const socket of sockets) socket.terminate();
  }
}
