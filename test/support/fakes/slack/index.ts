/**
 * A local fake of Slack for end-to-end tests of a Slack bridge built on @slack/bolt, with no
 * internet: one node:http server on 127.0.0.1 serves the Web API (`apiUrl`, for WebClient's
 * `slackApiUrl` / Bolt's `clientOptions.slackApiUrl`) and the Socket Mode WebSocket
 * (`apps.connections.open` hands out its URL); helpers send events over Socket Mode or as
 * signed Events API requests, inject faults, and inspect what the app did.
 *
 * Wire formats come from the SDK sources in node_modules (@slack/web-api WebClient.js,
 * @slack/socket-mode SocketModeClient.js / SlackWebSocket.js, @slack/bolt receivers/*) and
 * Slack's docs; see the header of each file in this folder.
 *
 *   const slack = await startFakeSlack();              // before the App: Bolt calls auth.test in its constructor
 *   const app = new App({ token: slack.identity.botToken, appToken: slack.identity.appToken, socketMode: true,
 *     clientOptions: { slackApiUrl: slack.apiUrl } });   // the Socket Mode client reuses these clientOptions
 *   await app.start();
 *   await slack.sendEvent(slack.appMention({ channel: "C1", user: "U1", text: "hi" }));   // resolves on the ack
 *   await slack.waitFor((s) => s.messages("C1").length > 0);
 *   await app.stop(); await slack.close();             // stop the app first, or it reconnects to a closed port
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  EventFactory,
  eventsApiEnvelope,
  postSigned,
  type BotMessageInput,
  type DeliveryOptions,
  type EventCallback,
  type MessageEventInput,
  type SignedPostOptions,
  type SignedPostResult,
  type SlackEvent,
} from "./events.ts";
import type { MethodContext } from "./methods.ts";
import { FakeSocketMode, type EnvelopeAck } from "./socketMode.ts";
import { SlackState, type ApiCall, type FakeSlackOptions, type Identity, type Reaction, type StoredMessage } from "./state.ts";
import { handleApiRequest } from "./webApi.ts";

export type { ApiCall, BotMessageInput, DeliveryOptions, EnvelopeAck, EventCallback, FakeSlackOptions, Identity, MessageEventInput, Reaction, SignedPostOptions, SignedPostResult, SlackEvent, StoredMessage };
export { eventsApiEnvelope, slackSignature, VERIFICATION_TOKEN } from "./events.ts";

export interface SendEventOptions extends DeliveryOptions {
  /** How long to wait for the ack; defaults to the fake's `ackTimeoutMs` (3000). */
  timeoutMs?: number;
}

/** What `sendEvent` resolves with: the client's ack and the ids Slack gave the delivery. */
export interface Delivery extends EnvelopeAck {
  event_id: string;
}

const MESSAGE_EVENTS = new Set(["message", "app_mention"]);

export class FakeSlack {
  readonly apiUrl: string;
  readonly identity: Identity;
  private readonly events: EventFactory;
  private readonly ackTimeoutMs: number;

  constructor(
    private readonly server: Server,
    private readonly state: SlackState,
    private readonly socketMode: FakeSocketMode,
    options: FakeSlackOptions,
  ) {
    const { port } = server.address() as AddressInfo;
    this.apiUrl = `http://127.0.0.1:${port}/api/`;
    this.identity = state.identity;
    this.events = new EventFactory(state.identity, state.clock);
    this.ackTimeoutMs = options.ackTimeoutMs ?? 3000;
  }

  // ----- fault injection

  /** The next `times` calls of `method` get HTTP 429 + `Retry-After`, and are not applied. */
  rateLimitNext(method: string, retryAfterSeconds: number, times = 1): void {
    this.state.queueFault(method, { kind: "ratelimit", retryAfterSeconds }, times);
  }

  /** The next `times` calls of `method` get `{ ok: false, error }`, and are not applied. */
  failNext(method: string, error: string, times = 1): void {
    this.state.queueFault(method, { kind: "fail", error }, times);
  }

  // ----- inspection

  /** The messages the app posted (through the API), as they are now; deleted ones left out. */
  messages(channel?: string): StoredMessage[] {
    return structuredClone(this.state.all(channel).filter((m) => m.origin === "api"));
  }

  /** Every live message, the app's and those that arrived as events, oldest first. */
  history(channel?: string): StoredMessage[] {
    return structuredClone(this.state.all(channel));
  }

  calls(method?: string): ApiCall[] {
    return structuredClone(this.state.calls(method));
  }

  reactions(channel: string, ts: string): Reaction[] {
    return (this.state.find(channel, ts)?.reactions ?? []).map((r) => ({ ...r, users: [...r.users] }));
  }

  /** Every ack the clients sent, in order. */
  acks(): EnvelopeAck[] {
    return this.socketMode.acks();
  }

  /** Resolves with the predicate's first truthy value; checked on every change and every 20 ms. */
  waitFor<T>(predicate: (fake: FakeSlack) => T | undefined | null | false, timeoutMs = 2000): Promise<T> {
    return new Promise((resolve, reject) => {
      let stop = () => {};
      const check = () => {
        let value: T | undefined | null | false;
        try {
          value = predicate(this);
        } catch (error) {
          stop();
          reject(error as Error);
          return;
        }
        if (value) {
          stop();
          resolve(value);
        }
      };
      const unsubscribe = this.state.onChange(check);
      const poll = setInterval(check, 20);
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`fake Slack: waitFor timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      stop = () => {
        unsubscribe();
        clearInterval(poll);
        clearTimeout(timer);
      };
      check();
    });
  }

  // ----- Socket Mode

  /** Socket Mode connections accepted so far; a reconnect counts as a new one. */
  get connections(): number {
    return this.socketMode.totalConnections;
  }

  get openConnections(): number {
    return this.socketMode.openConnections;
  }

  /** Pings received from Socket Mode clients. */
  get clientPings(): number {
    return this.socketMode.clientPings;
  }

  /** Resolves with the number (1, 2, ...) of the next connection, once its hello is sent. */
  connected(timeoutMs = 5000): Promise<number> {
    return this.socketMode.nextConnection(timeoutMs);
  }

  /**
   * Delivers an event in an `events_api` envelope to the newest open connection (waiting for one
   * if none is open) and resolves when the client acks it. A message or app_mention event also
   * joins the channel's history, so `conversations.replies` / `history` show it.
   */
  async sendEvent(event: SlackEvent, options: SendEventOptions = {}): Promise<Delivery> {
    const payload = this.eventCallback(event);
    const envelope = eventsApiEnvelope(payload, options);
    const ack = await this.socketMode.deliver(envelope, options.timeoutMs ?? this.ackTimeoutMs);
    return { ...ack, event_id: payload.event_id };
  }

  /** Sends any Socket Mode message with an `envelope_id` (interactive, slash_commands, ...); resolves on its ack. */
  sendEnvelope(envelope: Record<string, unknown> & { envelope_id: string }, timeoutMs = this.ackTimeoutMs): Promise<EnvelopeAck> {
    return this.socketMode.deliver(envelope, timeoutMs);
  }

  /** Sends `{type:"disconnect", reason}`: the SDK closes the socket and reconnects. */
  disconnect(reason = "refresh_requested"): void {
    this.socketMode.disconnect(reason);
  }

  /** Terminates every socket abruptly (no close frame). */
  dropConnections(): void {
    this.socketMode.drop();
  }

  // ----- events

  appMention(input: MessageEventInput): SlackEvent {
    return this.events.appMention(input);
  }

  directMessage(input: MessageEventInput): SlackEvent {
    return this.events.directMessage(input);
  }

  channelMessage(input: MessageEventInput): SlackEvent {
    return this.events.channelMessage(input);
  }

  botMessage(input: BotMessageInput): SlackEvent {
    return this.events.botMessage(input);
  }

  /** The `event_callback` payload for an event (a fresh `event_id`); records message events. */
  eventCallback(event: SlackEvent): EventCallback {
    this.record(event);
    return this.events.eventCallback(event);
  }

  /**
   * POSTs to an Events API endpoint (`http://host:port/slack/events`) with Slack's signature
   * headers. `payload` is an event (wrapped in `event_callback`), or a whole body — one with a
   * top-level `type` such as `url_verification` or `event_callback`, or a string — sent as is.
   */
  postSignedEvent(url: string, payload: SlackEvent | Record<string, unknown> | string, options: SignedPostOptions): Promise<SignedPostResult> {
    const body = typeof payload === "string" ? payload : JSON.stringify(isWholeBody(payload) ? payload : this.eventCallback(payload as SlackEvent));
    return postSigned(url, body, options);
  }

  /** Adds a user's message event to the channel's history (once per channel+ts). */
  private record(event: SlackEvent): void {
    const channel = typeof event["channel"] === "string" ? event["channel"] : undefined;
    const ts = typeof event["ts"] === "string" ? event["ts"] : undefined;
    if (!MESSAGE_EVENTS.has(event.type) || !channel || !ts || this.state.find(channel, ts)) return;
    const pick = (key: string) => (typeof event[key] === "string" ? (event[key] as string) : undefined);
    this.state.add({
      channel,
      ts,
      text: pick("text") ?? "",
      origin: "event",
      user: pick("user"),
      bot_id: pick("bot_id"),
      subtype: pick("subtype"),
      username: pick("username"),
      thread_ts: pick("thread_ts"),
      client_msg_id: pick("client_msg_id"),
    });
  }

  /** Closes every socket and the server. */
  async close(): Promise<void> {
    await this.socketMode.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const BODY_TYPES = new Set(["url_verification", "event_callback", "app_rate_limited"]);

function isWholeBody(payload: Record<string, unknown>): boolean {
  return typeof payload["type"] === "string" && BODY_TYPES.has(payload["type"]);
}

/** Starts the fake on 127.0.0.1, on a free port. */
export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const state = new SlackState(options);
  const socketMode = new FakeSocketMode(state, options.serverPingIntervalMs);
  let origin = "";
  const ctx: MethodContext = { state, openSocketUrl: () => socketMode.issueUrl(origin) };
  const server = createServer((req, res) => {
    handleApiRequest(req, res, ctx)
      .then((handled) => {
        if (!handled) res.writeHead(404).end();
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  server.on("upgrade", (req, socket, head) => socketMode.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return new FakeSlack(server, state, socketMode, options);
}
