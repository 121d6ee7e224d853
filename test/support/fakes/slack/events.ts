/**
 * Slack events as Slack delivers them: the event objects (app_mention, message.im,
 * message.channels, bot_message — docs.slack.dev/reference/events/app_mention and /message),
 * the `event_callback` outer payload with `authorizations`
 * (docs.slack.dev/apis/events-api/#callback-field), the Socket Mode `events_api` envelope
 * (docs.slack.dev/apis/events-api/using-socket-mode; read by
 * node_modules/@slack/socket-mode/dist/src/SocketModeClient.js `onWebSocketMessage`), and the
 * Events API's HTTP request signing — `X-Slack-Signature: v0=` HMAC-SHA256 of
 * `v0:<timestamp>:<body>`, `X-Slack-Request-Timestamp`, `X-Slack-Retry-Num` /
 * `X-Slack-Retry-Reason` — as node_modules/@slack/bolt/dist/receivers/verify-request.js and
 * HTTPModuleFunctions.js check them.
 */
import { createHmac, randomUUID } from "node:crypto";
import type { Identity, TsClock } from "./state.ts";

export type SlackEvent = Record<string, unknown> & { type: string };

export interface MessageEventInput {
  channel: string;
  text: string;
  /** Defaults to a fake person, `U0HUMAN`. */
  user?: string;
  ts?: string;
  thread_ts?: string;
}

export interface BotMessageInput {
  channel: string;
  text: string;
  /** Defaults to the fake's own bot id: the echo of the app's own post. */
  bot_id?: string;
  username?: string;
  ts?: string;
  thread_ts?: string;
}

export interface EventCallback {
  token: string;
  team_id: string;
  api_app_id: string;
  event: SlackEvent;
  type: "event_callback";
  event_id: string;
  event_time: number;
  authorizations: Array<Record<string, unknown>>;
  is_ext_shared_channel: boolean;
  event_context: string;
  context_team_id: string;
  context_enterprise_id: null;
}

export interface EventsApiEnvelope {
  envelope_id: string;
  type: "events_api";
  accepts_response_payload: false;
  retry_attempt: number;
  retry_reason: string;
  payload: EventCallback;
}

export interface DeliveryOptions {
  retryAttempt?: number;
  retryReason?: string;
}

/** The Events API's verification token the fake puts in payloads (deprecated by Slack, still sent). */
export const VERIFICATION_TOKEN = "fake-verification-token";

/** Builds event objects and their payloads for one fake workspace; every `event_id` unique. */
export class EventFactory {
  private eventCount = 0;
  constructor(
    private readonly id: Identity,
    private readonly clock: TsClock,
  ) {}

  private message(input: MessageEventInput, type: string): SlackEvent {
    const ts = input.ts ?? this.clock.next();
    return {
      type,
      user: input.user ?? "U0HUMAN",
      text: input.text,
      ts,
      event_ts: ts,
      channel: input.channel,
      team: this.id.teamId,
      client_msg_id: randomUUID(),
      ...(input.thread_ts ? { thread_ts: input.thread_ts } : {}),
    };
  }

  /** An `app_mention`; the text gets the `<@bot>` mention in front when it lacks one, as it always has one in Slack. */
  appMention(input: MessageEventInput): SlackEvent {
    const mention = `<@${this.id.botUserId}>`;
    const text = input.text.includes(mention) ? input.text : `${mention} ${input.text}`;
    return this.message({ ...input, text }, "app_mention");
  }

  /** A `message` in a DM with the app (`message.im`). */
  directMessage(input: MessageEventInput): SlackEvent {
    return { ...this.message(input, "message"), channel_type: "im" };
  }

  /** A `message` in a public channel (`message.channels`). */
  channelMessage(input: MessageEventInput): SlackEvent {
    return { ...this.message(input, "message"), channel_type: "channel" };
  }

  /** A `message` with subtype `bot_message`. */
  botMessage(input: BotMessageInput): SlackEvent {
    const ts = input.ts ?? this.clock.next();
    return {
      type: "message",
      subtype: "bot_message",
      bot_id: input.bot_id ?? this.id.botId,
      ...(input.username ? { username: input.username } : {}),
      text: input.text,
      ts,
      event_ts: ts,
      channel: input.channel,
      channel_type: input.channel.startsWith("D") ? "im" : "channel",
      ...(input.thread_ts ? { thread_ts: input.thread_ts } : {}),
    };
  }

  /** The `event_callback` body around an event, as the Events API posts it and Socket Mode wraps it. */
  eventCallback(event: SlackEvent): EventCallback {
    this.eventCount += 1;
    const { teamId, appId, botUserId } = this.id;
    return {
      token: VERIFICATION_TOKEN,
      team_id: teamId,
      context_team_id: teamId,
      context_enterprise_id: null,
      api_app_id: appId,
      event,
      type: "event_callback",
      event_id: `Ev0FAKE${String(this.eventCount).padStart(6, "0")}`,
      event_time: this.clock.seconds(),
      authorizations: [{ enterprise_id: null, team_id: teamId, user_id: botUserId, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: `4-fake-${this.eventCount}`,
    };
  }
}

/** The Socket Mode envelope Slack sends for an Events API payload. */
export function eventsApiEnvelope(payload: EventCallback, options: DeliveryOptions = {}): EventsApiEnvelope {
  return {
    envelope_id: randomUUID(),
    type: "events_api",
    accepts_response_payload: false,
    retry_attempt: options.retryAttempt ?? 0,
    retry_reason: options.retryReason ?? "",
    payload,
  };
}

/** `v0=<hex>`: Slack's request signature over `v0:<timestamp>:<body>`. */
export function slackSignature(signingSecret: string, timestamp: number | string, body: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export interface SignedPostOptions {
  signingSecret: string;
  /** Seconds since the epoch; defaults to now. Bolt refuses one more than 5 minutes off. */
  timestamp?: number;
  retryNum?: number;
  retryReason?: string;
  /** Sign with the wrong secret. */
  badSignature?: boolean;
}

export interface SignedPostResult {
  status: number;
  body: string;
  /** The body parsed, when it is JSON. */
  json?: unknown;
}

/** POSTs a body to an Events API endpoint with Slack's headers, as Slack does. */
export async function postSigned(url: string, body: string, options: SignedPostOptions): Promise<SignedPostResult> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const secret = options.badSignature ? `${options.signingSecret}-wrong` : options.signingSecret;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": slackSignature(secret, timestamp, body),
  };
  if (options.retryNum !== undefined) headers["x-slack-retry-num"] = String(options.retryNum);
  if (options.retryReason !== undefined) headers["x-slack-retry-reason"] = options.retryReason;
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, body: text, json };
}
