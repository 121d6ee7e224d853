/**
 * The bridge's connection to Slack, with @slack/bolt, in either mode:
 *
 * - `socket`: Socket Mode (SLACK_APP_TOKEN): the bridge dials out, nothing listens. The SDK's
 *   client reconnects by itself (socketWatch.ts shows it on the bridge machine). Events Slack
 *   did not see acknowledged before a socket went come again on the next, and the core takes
 *   each message once.
 * - `events`: the HTTP Events API (SLACK_SIGNING_SECRET): `POST /slack/events` on the
 *   configured host and port. Bolt checks each request's signature and its timestamp (five
 *   minutes at most) and refuses any other with 401 before anything is read; it answers
 *   Slack's `url_verification` challenge itself.
 *
 * Either way, an event is acknowledged only after the bridge took it (AckAfterReceiveApp).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HTTPReceiver, SocketModeReceiver, type Logger } from "@slack/bolt";
import type { BridgeRuntime } from "../core/index.ts";
import { AckAfterReceiveApp } from "./AckAfterReceiveApp.ts";
import { boltClientOptions, slackErrorCode } from "./slackApi.ts";
import type { SlackIdentity } from "./slackIdentity.ts";
import type { SlackBridgeOptions, SlackCredentials } from "./slackOptions.ts";
import { watchSocket } from "./socketWatch.ts";

export const EVENTS_PATH = "/slack/events";

/** How long the first connection may take before the start gives up (a recoverable failure retries inside the SDK). */
const START_TIMEOUT_MS = 30_000;
/** How long a stop waits for the socket's close handshake. */
const STOP_GRACE_MS = 3000;

export interface SlackConnectionOptions {
  options: SlackBridgeOptions;
  credentials: SlackCredentials;
  me: SlackIdentity;
  logger: Logger;
  runtime: BridgeRuntime;
  /** Takes one event; resolves once it may be acknowledged. */
  take(event: Record<string, unknown>): Promise<unknown>;
}

export interface SlackConnection {
  /** The Events API endpoint, in events mode. */
  readonly url?: string;
  stop(): Promise<void>;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function appFor(o: SlackConnectionOptions, receiver: SocketModeReceiver | HTTPReceiver): AckAfterReceiveApp {
  const app = new AckAfterReceiveApp({
    token: o.credentials.botToken,
    botUserId: o.me.botUserId,
    ...(o.me.botId ? { botId: o.me.botId } : {}),
    receiver,
    logger: o.logger,
    clientOptions: boltClientOptions(o.credentials, o.logger),
    // Bolt's in-memory conversation store would only grow; the bridge keeps nothing per conversation here.
    convoStore: false,
  });
  // A throw leaves the event unacknowledged: Slack delivers it again.
  app.event("app_mention", async ({ event }) => void (await o.take(event as unknown as Record<string, unknown>)));
  app.event("message", async ({ event }) => void (await o.take(event as unknown as Record<string, unknown>)));
  return app;
}

async function connectSocket(o: SlackConnectionOptions, clientPingTimeout: number): Promise<SlackConnection> {
  const appToken = o.credentials.appToken as string;
  const receiver = new SocketModeReceiver({ appToken, logger: o.logger, clientPingTimeout, installerOptions: { clientOptions: boltClientOptions(o.credentials, o.logger) } });
  const app = appFor(o, receiver);
  const socket = receiver.client;
  const watch = watchSocket(socket, o.runtime);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    watch.stopping();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gone = new Promise<void>((resolve) => {
      socket.once("disconnected", () => resolve());
      timer = setTimeout(resolve, STOP_GRACE_MS);
    });
    await app.stop();
    await gone;
    clearTimeout(timer);
  };
  try {
    await within(app.start(), START_TIMEOUT_MS, "connecting to Slack (Socket Mode)");
  } catch (err) {
    await stop().catch(() => undefined);
    const code = slackErrorCode(err);
    throw new Error(code ? `Slack refused SLACK_APP_TOKEN (${code})` : `Socket Mode did not connect: ${err instanceof Error ? err.message : String(err)}`);
  }
  watch.started();
  return { stop };
}

async function connectEvents(o: SlackConnectionOptions, host: string, port: number): Promise<SlackConnection> {
  const receiver = new HTTPReceiver({ signingSecret: o.credentials.signingSecret as string, endpoints: EVENTS_PATH, logger: o.logger, port });
  const app = appFor(o, receiver);
  const server = (await app.start({ port, host })) as Server;
  const { address, port: bound } = server.address() as AddressInfo;
  const url = `http://${address.includes(":") ? `[${address}]` : address}:${bound}${EVENTS_PATH}`;
  let stopped = false;
  return {
    url,
    async stop() {
      if (stopped) return;
      stopped = true;
      await app.stop();
    },
  };
}

export function connectSlack(o: SlackConnectionOptions): Promise<SlackConnection> {
  return o.options.mode === "socket" ? connectSocket(o, o.options.clientPingTimeoutMs) : connectEvents(o, o.options.host, o.options.port);
}
