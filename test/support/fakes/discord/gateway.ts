/**
 * The fake Discord gateway: Discord's WebSocket protocol as described in topics/gateway
 * (connecting, `?v=10&encoding=json[&compress=zlib-stream]`, HELLO op 10 with
 * `heartbeat_interval`, IDENTIFY op 2, READY with `session_id` and `resume_gateway_url`,
 * heartbeats op 1 answered by HEARTBEAT_ACK op 11, RESUME op 6 replaying the missed dispatches
 * and finishing with RESUMED, RECONNECT op 7, INVALID_SESSION op 9 with its resumable flag,
 * transport compression with one zlib context per connection flushed with Z_SYNC_FLUSH),
 * topics/opcodes-and-status-codes (close codes 4000-4014) and topics/gateway-events.
 *
 * The client side it must satisfy is @discordjs/ws 1.2.3
 * (node_modules/@discordjs/ws/dist/index.js, class WebSocketShard): it connects to
 * `${resumeURL ?? gatewayInformation.url}?v=10&encoding=json` (no `compress` unless zlib-sync
 * is installed), waits for HELLO, sends IDENTIFY (or RESUME when it holds a session), treats
 * READY and RESUMED as dispatches, keeps the highest `s` it saw, resumes after close codes other
 * than 1000 and 4004/4010-4014 (after a 500 ms pause), and destroys itself as a zombie when a
 * heartbeat goes unacknowledged.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { constants as zlibConstants, createDeflate, type Deflate } from "node:zlib";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import type { Json } from "./payloads.ts";

/** topics/opcodes-and-status-codes#gateway-gateway-opcodes */
export const Op = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  PresenceUpdate: 3,
  VoiceStateUpdate: 4,
  Resume: 6,
  Reconnect: 7,
  RequestGuildMembers: 8,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
  RequestSoundboardSounds: 31,
} as const;

/** topics/opcodes-and-status-codes#gateway-gateway-close-event-codes */
export const CloseCode = {
  UnknownError: 4000,
  UnknownOpcode: 4001,
  DecodeError: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidSeq: 4007,
  InvalidApiVersion: 4012,
  InvalidIntents: 4013,
  DisallowedIntents: 4014,
} as const;

export interface DispatchRecord {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

export interface IdentifyRecord {
  token: string;
  intents: number;
  properties?: Json;
  shard?: [number, number];
  compress?: boolean;
  large_threshold?: number;
  presence?: Json;
  sessionId: string;
}

export interface GatewaySession {
  id: string;
  intents: number;
  seq: number;
  /** Every dispatch of this session, for RESUME to replay. */
  buffer: DispatchRecord[];
  connection: GatewayConnection | null;
  resumable: boolean;
  /** Already-received dispatches to send again on the next RESUME (at-least-once delivery). */
  redeliver: number;
}

export interface GatewayConnection {
  ws: WebSocket;
  url: string;
  session: GatewaySession | null;
  deflate: Deflate | null;
  sending: Promise<void>;
  heartbeats: number;
}

/** What the gateway asks of the rest of the fake. */
export interface GatewayHooks {
  token: string;
  heartbeatIntervalMs: number;
  /** Intents a client may not ask for (close 4014), e.g. MESSAGE_CONTENT when not enabled. */
  disallowedIntents: number;
  /** `resume_gateway_url` sent in READY. */
  resumeUrl: () => string;
  /** READY's `d` for a new session (without session_id and resume_gateway_url). */
  ready: (intents: number) => Json;
  /** The dispatches that follow READY (GUILD_CREATE for each guild), given the session's intents. */
  afterReady: (intents: number) => Array<{ t: string; d: unknown }>;
  /** Already-received dispatches replayed again on every RESUME (unless a drop says otherwise). */
  redeliverOnResume: number;
  /** Called whenever something observable changes (for waitFor). */
  changed: () => void;
}

export interface DropOptions {
  /** Close code sent to the client; 4000 (unknown error, which discord.js resumes after) by default. */
  code?: number;
  /** Destroy the TCP socket without a close frame (the client sees 1006). */
  abrupt?: boolean;
  /** How many dispatches the client already received to replay again on its RESUME. */
  redeliver?: number;
}

export class FakeGateway {
  readonly wss = new WebSocketServer({ noServer: true });
  readonly sessions = new Map<string, GatewaySession>();
  readonly identifies: IdentifyRecord[] = [];
  readonly live = new Set<GatewayConnection>();
  readonly connectionUrls: string[] = [];
  resumes = 0;
  heartbeats = 0;
  ackHeartbeats = true;

  constructor(private readonly hooks: GatewayHooks) {}

  get connections(): number {
    return this.connectionUrls.length;
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, request.url ?? "/"));
  }

  private accept(ws: WebSocket, url: string): void {
    const query = new URL(url, "http://fake").searchParams;
    const connection: GatewayConnection = { ws, url, session: null, deflate: null, sending: Promise.resolve(), heartbeats: 0 };
    this.connectionUrls.push(url);
    this.live.add(connection);
    ws.on("close", (code) => this.onClose(connection, code));
    ws.on("error", () => undefined);
    this.hooks.changed();
    if (query.get("encoding") && query.get("encoding") !== "json") {
      ws.close(CloseCode.DecodeError, "the fake gateway speaks encoding=json only");
      return;
    }
    if (query.get("v") && query.get("v") !== "10") {
      ws.close(CloseCode.InvalidApiVersion, "Invalid API version");
      return;
    }
    if (query.get("compress") === "zlib-stream") connection.deflate = createDeflate();
    ws.on("message", (data) => this.onMessage(connection, data));
    this.send(connection, { op: Op.Hello, d: { heartbeat_interval: this.hooks.heartbeatIntervalMs, _trace: ["fake-discord-gateway"] }, s: null, t: null });
  }

  private onClose(connection: GatewayConnection, code: number): void {
    this.live.delete(connection);
    connection.deflate?.close();
    const session = connection.session;
    if (session && session.connection === connection) {
      session.connection = null;
      // A client closing with 1000 or 1001 ends its session (topics/gateway#disconnecting).
      if (code === 1000 || code === 1001) session.resumable = false;
    }
    this.hooks.changed();
  }

  /** Frames go out in order; with zlib-stream each is the next piece of one deflate stream. */
  private send(connection: GatewayConnection, payload: Json): void {
    const text = JSON.stringify(payload);
    const deflate = connection.deflate;
    connection.sending = connection.sending.then(
      () =>
        new Promise<void>((resolve) => {
          if (connection.ws.readyState !== WebSocket.OPEN) return resolve();
          if (!deflate) return connection.ws.send(text, () => resolve());
          const chunks: Buffer[] = [];
          const onData = (chunk: Buffer) => chunks.push(chunk);
          deflate.on("data", onData);
          deflate.write(text);
          deflate.flush(zlibConstants.Z_SYNC_FLUSH, () => {
            deflate.off("data", onData);
            if (connection.ws.readyState === WebSocket.OPEN) connection.ws.send(Buffer.concat(chunks), { binary: true }, () => resolve());
            else resolve();
          });
        }),
    );
  }

  private onMessage(connection: GatewayConnection, data: RawData): void {
    let payload: { op?: unknown; d?: unknown };
    try {
      payload = JSON.parse(data.toString()) as { op?: unknown; d?: unknown };
    } catch {
      connection.ws.close(CloseCode.DecodeError, "Error while decoding payload.");
      return;
    }
    switch (payload.op) {
      case Op.Heartbeat:
        return this.onHeartbeat(connection);
      case Op.Identify:
        return this.onIdentify(connection, (payload.d ?? {}) as Json);
      case Op.Resume:
        return this.onResume(connection, (payload.d ?? {}) as Json);
      case Op.PresenceUpdate:
      case Op.VoiceStateUpdate:
      case Op.RequestGuildMembers:
      case Op.RequestSoundboardSounds:
        if (!connection.session) connection.ws.close(CloseCode.NotAuthenticated, "Not authenticated.");
        return;
      default:
        connection.ws.close(CloseCode.UnknownOpcode, "Unknown opcode.");
    }
  }

  private onHeartbeat(connection: GatewayConnection): void {
    connection.heartbeats++;
    this.heartbeats++;
    if (this.ackHeartbeats) this.send(connection, { op: Op.HeartbeatAck, d: null, s: null, t: null });
    this.hooks.changed();
  }

  private onIdentify(connection: GatewayConnection, d: Json): void {
    if (connection.session) return connection.ws.close(CloseCode.AlreadyAuthenticated, "Already authenticated.");
    if (d["token"] !== this.hooks.token) return connection.ws.close(CloseCode.AuthenticationFailed, "Authentication failed.");
    const intents = d["intents"];
    if (typeof intents !== "number" || !Number.isInteger(intents) || intents < 0) {
      return connection.ws.close(CloseCode.InvalidIntents, "Invalid intent(s).");
    }
    if (intents & this.hooks.disallowedIntents) return connection.ws.close(CloseCode.DisallowedIntents, "Disallowed intent(s).");
    const session: GatewaySession = {
      id: randomBytes(16).toString("hex"),
      intents,
      seq: 0,
      buffer: [],
      connection,
      resumable: true,
      redeliver: 0,
    };
    this.sessions.set(session.id, session);
    connection.session = session;
    this.identifies.push({ ...(d as Omit<IdentifyRecord, "sessionId">), sessionId: session.id });
    this.sessionDispatch(session, "READY", { ...this.hooks.ready(intents), session_id: session.id, resume_gateway_url: this.hooks.resumeUrl() });
    for (const event of this.hooks.afterReady(intents)) this.sessionDispatch(session, event.t, event.d);
    this.hooks.changed();
  }

  private onResume(connection: GatewayConnection, d: Json): void {
    if (connection.session) return connection.ws.close(CloseCode.AlreadyAuthenticated, "Already authenticated.");
    if (d["token"] !== this.hooks.token) return connection.ws.close(CloseCode.AuthenticationFailed, "Authentication failed.");
    const session = this.sessions.get(String(d["session_id"]));
    if (!session || !session.resumable) {
      this.send(connection, { op: Op.InvalidSession, d: false, s: null, t: null });
      return;
    }
    const seq = typeof d["seq"] === "number" ? d["seq"] : 0;
    if (seq > session.seq) return connection.ws.close(CloseCode.InvalidSeq, "Invalid seq.");
    const previous = session.connection;
    if (previous && previous !== connection) {
      previous.session = null;
      previous.ws.terminate();
    }
    session.connection = connection;
    connection.session = session;
    this.resumes++;
    const missed = session.buffer.filter((event) => event.s > seq);
    const redeliver = session.redeliver > 0 ? session.redeliver : this.hooks.redeliverOnResume;
    const again = redeliver > 0 ? session.buffer.filter((event) => event.s <= seq && event.t !== "READY").slice(-redeliver) : [];
    session.redeliver = 0;
    for (const event of [...again, ...missed]) this.send(connection, event as unknown as Json);
    session.seq++;
    this.send(connection, { op: Op.Dispatch, t: "RESUMED", s: session.seq, d: { _trace: ["fake-discord-gateway"] } });
    this.hooks.changed();
  }

  /** Adds a dispatch to one session's buffer and sends it if the session is connected. */
  sessionDispatch(session: GatewaySession, t: string, d: unknown): DispatchRecord {
    session.seq++;
    const event: DispatchRecord = { op: Op.Dispatch, t, s: session.seq, d };
    session.buffer.push(event);
    if (session.connection) this.send(session.connection, event as unknown as Json);
    return event;
  }

  /**
   * Sends a dispatch to every resumable session (connected now, or buffered for its RESUME).
   * `d` may be a function of the session's intents; returning undefined skips that session.
   */
  dispatch(t: string, d: unknown | ((intents: number) => unknown)): number {
    let delivered = 0;
    for (const session of this.sessions.values()) {
      if (!session.resumable) continue;
      const data = typeof d === "function" ? (d as (intents: number) => unknown)(session.intents) : d;
      if (data === undefined) continue;
      this.sessionDispatch(session, t, data);
      delivered++;
    }
    this.hooks.changed();
    return delivered;
  }

  /** Closes every live gateway connection; resolves once each has closed. */
  async drop(options: DropOptions = {}): Promise<void> {
    const closing = [...this.live].map((connection) => {
      if (connection.session && options.redeliver) connection.session.redeliver = options.redeliver;
      const closed = new Promise<void>((resolve) => connection.ws.once("close", () => resolve()));
      if (options.abrupt) connection.ws.terminate();
      else connection.ws.close(options.code ?? CloseCode.UnknownError, "fake Discord dropped the connection");
      return closed;
    });
    await Promise.all(closing);
  }

  /** op 7: the client should reconnect and resume. */
  sendReconnect(): void {
    for (const connection of this.live) this.send(connection, { op: Op.Reconnect, d: null, s: null, t: null });
  }

  /** op 1 from the server: the client must heartbeat now. */
  requestHeartbeat(): void {
    for (const connection of this.live) this.send(connection, { op: Op.Heartbeat, d: null, s: null, t: null });
  }

  /** op 9: with `resumable` false the sessions end and the client must IDENTIFY again. */
  invalidateSessions(resumable: boolean): void {
    for (const connection of this.live) {
      const session = connection.session;
      if (!session) continue;
      if (!resumable) session.resumable = false;
      session.connection = null;
      connection.session = null;
      this.send(connection, { op: Op.InvalidSession, d: resumable, s: null, t: null });
    }
    this.hooks.changed();
  }

  async close(): Promise<void> {
    for (const connection of this.live) connection.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
