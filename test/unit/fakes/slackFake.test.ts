/**
 * The fake Slack (test/support/fakes/slack) driven by the real SDKs: @slack/web-api's WebClient
 * against its Web API, a Bolt App over Socket Mode against its WebSocket, and a Bolt App's
 * HTTPReceiver receiving its signed Events API requests.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { App, LogLevel, SocketModeReceiver, webApi } from "@slack/bolt";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";

const { WebClient, WebClientEvent, ErrorCode } = webApi;
type WebClientOptions = ConstructorParameters<typeof webApi.WebClient>[1];

let fake: FakeSlack | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await fake?.close();
  fake = undefined;
});

async function start(): Promise<FakeSlack> {
  fake = await startFakeSlack({ users: { U0ADA: { name: "ada", real_name: "Ada Lovelace", display_name: "ada" } } });
  return fake;
}

function client(f: FakeSlack, token = f.identity.botToken, options: WebClientOptions = {}) {
  return new WebClient(token, { slackApiUrl: f.apiUrl, logLevel: webApi.LogLevel.ERROR, ...options });
}

describe("Web API, through WebClient", () => {
  it("posts, updates, reacts and reads a thread with its metadata", async () => {
    const f = await start();
    const web = client(f);
    expect(await web.auth.test()).toMatchObject({ ok: true, user_id: "U0BOT", bot_id: "B0BOT", team_id: "T0001" });

    const root = await web.chat.postMessage({ channel: "C1", text: "root", metadata: { event_type: "turn", event_payload: { n: 1 } } });
    expect(root).toMatchObject({ ok: true, channel: "C1", ts: "1700000000.000100", message: { text: "root", user: "U0BOT", bot_id: "B0BOT" } });
    const reply = await web.chat.postMessage({ channel: "C1", text: "draft", thread_ts: root.ts!, username: "Claudius", icon_emoji: ":robot_face:" });
    await web.chat.update({ channel: "C1", ts: reply.ts!, text: "final" });

    const [first, second] = f.messages("C1");
    expect(first.metadata).toEqual({ event_type: "turn", event_payload: { n: 1 } });
    expect(second).toMatchObject({ text: "final", thread_ts: root.ts, username: "Claudius", icon_emoji: ":robot_face:" });
    expect(second.edits).toEqual([expect.objectContaining({ previousText: "draft", text: "final" })]);

    await web.reactions.add({ channel: "C1", timestamp: root.ts!, name: "eyes" });
    await expect(web.reactions.add({ channel: "C1", timestamp: root.ts!, name: "eyes" })).rejects.toMatchObject({ data: { error: "already_reacted" } });
    expect(f.reactions("C1", root.ts!)).toEqual([{ name: "eyes", users: ["U0BOT"], count: 1 }]);
    await web.reactions.remove({ channel: "C1", timestamp: root.ts!, name: "eyes" });
    await expect(web.reactions.remove({ channel: "C1", timestamp: root.ts!, name: "eyes" })).rejects.toMatchObject({ data: { error: "no_reaction" } });

    const withMeta = await web.conversations.replies({ channel: "C1", ts: root.ts!, include_all_metadata: true });
    expect(withMeta.messages?.map((m) => m.text)).toEqual(["root", "final"]);
    expect(withMeta.messages?.[0]).toMatchObject({ reply_count: 1, metadata: { event_type: "turn", event_payload: { n: 1 } } });
    const without = await web.conversations.replies({ channel: "C1", ts: root.ts! });
    expect(without.messages?.[0]).not.toHaveProperty("metadata");
    const history = await web.conversations.history({ channel: "C1", include_all_metadata: true });
    expect(history.messages?.map((m) => m.text)).toEqual(["root"]);

    await web.chat.delete({ channel: "C1", ts: reply.ts! });
    expect(f.messages("C1").map((m) => m.text)).toEqual(["root"]);
    await expect(web.chat.update({ channel: "C1", ts: reply.ts!, text: "x" })).rejects.toMatchObject({ data: { error: "message_not_found" } });
  });

  it("answers users.info and Slack's errors: bad token, wrong token kind, unknown method, injected failure", async () => {
    const f = await start();
    const web = client(f);
    expect((await web.users.info({ user: "U0ADA" })).user).toMatchObject({ id: "U0ADA", name: "ada", real_name: "Ada Lovelace", profile: { display_name: "ada" } });
    await expect(web.users.info({ user: "U0NOBODY" })).rejects.toMatchObject({ code: ErrorCode.PlatformError, data: { error: "user_not_found" } });
    await expect(client(f, "xoxb-wrong").auth.test()).rejects.toMatchObject({ data: { error: "invalid_auth" } });
    await expect(client(f, f.identity.appToken).chat.postMessage({ channel: "C1", text: "x" })).rejects.toMatchObject({ data: { error: "not_allowed_token_type" } });
    await expect(web.apiCall("chat.nonsense")).rejects.toMatchObject({ data: { error: "unknown_method" } });
    f.failNext("chat.postMessage", "channel_not_found");
    await expect(web.chat.postMessage({ channel: "C404", text: "x" })).rejects.toMatchObject({ data: { error: "channel_not_found" } });
    expect(f.messages()).toEqual([]);
    expect(f.calls("chat.postMessage").map((c) => c.error)).toEqual(["not_allowed_token_type", "channel_not_found"]);
    expect(f.calls("chat.postMessage")[1]).toMatchObject({ status: 200, ok: false, args: { channel: "C404", text: "x" } });
  });

  it("rate limits with 429 + Retry-After: WebClient waits, retries, and the message is posted once", async () => {
    const f = await start();
    f.rateLimitNext("chat.postMessage", 1);
    const web = client(f, undefined, { retryConfig: { retries: 2, minTimeout: 0, maxTimeout: 0 } });
    const limited: number[] = [];
    web.on(WebClientEvent.RATE_LIMITED, (seconds: number) => limited.push(seconds));
    const began = Date.now();
    await web.chat.postMessage({ channel: "C1", text: "once" });
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    expect(limited).toEqual([1]);
    expect(f.calls("chat.postMessage").map((c) => c.status)).toEqual([429, 200]);
    expect(f.messages().map((m) => m.text)).toEqual(["once"]);

    f.rateLimitNext("chat.postMessage", 7);
    const impatient = client(f, undefined, { rejectRateLimitedCalls: true });
    await expect(impatient.chat.postMessage({ channel: "C1", text: "never" })).rejects.toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 7 });
    expect(f.messages().map((m) => m.text)).toEqual(["once"]);
  });
});

/** Swallows logs: an abruptly dropped socket is logged at ERROR by the SDK, by design. */
const quietLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

/** A Bolt App in Socket Mode against the fake; `clientPingTimeout` also sets its reconnect delay. */
async function socketApp(f: FakeSlack, clientPingTimeout?: number): Promise<App> {
  const clientOptions = { slackApiUrl: f.apiUrl };
  const app = clientPingTimeout
    ? new App({
        token: f.identity.botToken,
        clientOptions,
        logLevel: LogLevel.ERROR,
        receiver: new SocketModeReceiver({ appToken: f.identity.appToken, clientPingTimeout, logger: quietLogger, installerOptions: { clientOptions } }),
      })
    : new App({ token: f.identity.botToken, appToken: f.identity.appToken, socketMode: true, clientOptions, logLevel: LogLevel.ERROR });
  cleanups.push(() => app.stop());
  await app.start();
  return app;
}

describe("Socket Mode, through a Bolt App", () => {
  it("delivers an app_mention, gets the ack, and the app's threaded reply lands", async () => {
    const f = await start();
    const app = await socketApp(f);
    const retries: Array<number | undefined> = [];
    app.event("app_mention", async ({ event, client: web, context }) => {
      retries.push(context.retryNum);
      await web.chat.postMessage({ channel: event.channel, thread_ts: event.ts, text: `heard: ${event.text}` });
    });
    expect(f.connections).toBe(1);

    const mention = f.appMention({ channel: "C1", user: "U0ADA", text: "hello" });
    const delivery = await f.sendEvent(mention);
    expect(delivery).toMatchObject({ connection: 1, event_id: expect.stringMatching(/^Ev/) });
    const reply = await f.waitFor((s) => s.messages("C1")[0]);
    expect(reply).toMatchObject({ text: "heard: <@U0BOT> hello", thread_ts: mention.ts });

    await f.sendEvent(f.appMention({ channel: "C1", user: "U0ADA", text: "again" }), { retryAttempt: 1, retryReason: "timeout" });
    await f.waitFor((s) => s.messages("C1").length === 2);
    // Socket Mode sends retry_attempt 0 on a first delivery, so Bolt's context.retryNum is 0, not undefined.
    expect(retries).toEqual([0, 1]);
    const thread = await client(f).conversations.replies({ channel: "C1", ts: mention.ts as string });
    expect(thread.messages?.map((m) => m.user)).toEqual(["U0ADA", "U0BOT"]);
  });

  it("acks every envelope, while Bolt's ignoreSelf drops the app's own bot_message echo", async () => {
    const f = await start();
    const app = await socketApp(f);
    const seen: string[] = [];
    app.message(async ({ message }) => {
      if ("text" in message && message.text) seen.push(message.text);
    });
    await f.sendEvent(f.botMessage({ channel: "C1", text: "my own echo" }));
    await f.sendEvent(f.botMessage({ channel: "C1", text: "another bot", bot_id: "B0OTHER" }));
    await f.sendEvent(f.channelMessage({ channel: "C1", user: "U0ADA", text: "a person" }));
    await f.waitFor(() => seen.length === 2);
    expect(seen).toEqual(["another bot", "a person"]);
    expect(f.acks()).toHaveLength(3);
  });

  it("reconnects after a disconnect message and after a dropped socket, and still receives events", async () => {
    const f = await start();
    const app = await socketApp(f, 300);
    const seen: string[] = [];
    app.message(async ({ message }) => {
      if ("text" in message && message.text) seen.push(message.text);
    });

    let next = f.connected();
    f.disconnect();
    expect(await next).toBe(2);
    await f.sendEvent(f.directMessage({ channel: "D1", user: "U0ADA", text: "after refresh" }));

    next = f.connected();
    f.dropConnections();
    expect(await next).toBe(3);
    await f.sendEvent(f.directMessage({ channel: "D1", user: "U0ADA", text: "after drop" }));
    await f.waitFor(() => seen.length === 2);
    expect(seen).toEqual(["after refresh", "after drop"]);
    expect(f.calls("apps.connections.open")).toHaveLength(3);
  });
});

describe("Events API over HTTP, through a Bolt App's HTTPReceiver", () => {
  const signingSecret = "fake-signing-secret";

  async function httpApp(f: FakeSlack): Promise<{ app: App; url: string }> {
    const app = new App({ token: f.identity.botToken, signingSecret, clientOptions: { slackApiUrl: f.apiUrl }, logLevel: LogLevel.ERROR });
    const server = (await app.start({ port: 0, host: "127.0.0.1" })) as Server;
    cleanups.push(() => app.stop());
    return { app, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events` };
  }

  it("accepts a signed event, refuses a bad signature or a stale timestamp, and answers url_verification", async () => {
    const f = await start();
    const { app, url } = await httpApp(f);
    const heard: Array<{ text: string; retryNum?: number; retryReason?: string }> = [];
    app.event("app_mention", async ({ event, context }) => {
      heard.push({ text: event.text, retryNum: context.retryNum, retryReason: context.retryReason });
    });

    const ok = await f.postSignedEvent(url, f.appMention({ channel: "C1", user: "U0ADA", text: "signed" }), { signingSecret, retryNum: 2, retryReason: "http_timeout" });
    expect(ok.status).toBe(200);
    await f.waitFor(() => heard.length === 1);
    expect(heard).toEqual([{ text: "<@U0BOT> signed", retryNum: 2, retryReason: "http_timeout" }]);

    const forged = await f.postSignedEvent(url, f.appMention({ channel: "C1", user: "U0ADA", text: "forged" }), { signingSecret, badSignature: true });
    const stale = await f.postSignedEvent(url, f.appMention({ channel: "C1", user: "U0ADA", text: "stale" }), { signingSecret, timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect([forged.status, stale.status]).toEqual([401, 401]);

    const challenge = await f.postSignedEvent(url, { type: "url_verification", challenge: "c-123", token: "fake-verification-token" }, { signingSecret });
    expect(challenge).toMatchObject({ status: 200, json: { challenge: "c-123" } });
    expect(heard).toHaveLength(1);
  });
});

describe("the raw wire", () => {
  it("takes JSON bodies and a Bearer token, and refuses a missing token", async () => {
    const f = await start();
    const post = (headers: Record<string, string>) =>
      fetch(`${f.apiUrl}chat.postMessage`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8", ...headers },
        body: JSON.stringify({ channel: "C1", text: "json", metadata: { event_type: "e", event_payload: { a: 1 } } }),
      }).then((r) => r.json());
    expect(await post({ authorization: `Bearer ${f.identity.botToken}` })).toMatchObject({ ok: true, message: { metadata: { event_type: "e" } } });
    expect(await post({})).toEqual({ ok: false, error: "not_authed" });
  });

  it("refuses a socket without a valid ticket, pings when asked to, and times out an unacked envelope", async () => {
    fake = await startFakeSlack({ serverPingIntervalMs: 20 });
    const f = fake;
    const socketUrl = (await client(f, f.identity.appToken).apps.connections.open()).url!;
    const refused = await new Promise<number | undefined>((resolve) => {
      const ws = new WebSocket(socketUrl.replace(/ticket=[^&]+/, "ticket=forged"));
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode));
      ws.on("error", () => resolve(undefined));
    });
    expect(refused).toBe(401);

    const ws = new WebSocket(socketUrl);
    cleanups.push(async () => ws.terminate());
    const hello = await new Promise<Record<string, unknown>>((resolve) => ws.once("message", (data) => resolve(JSON.parse(String(data)))));
    expect(hello).toMatchObject({ type: "hello", num_connections: 1, connection_info: { app_id: "A0APP" } });
    await new Promise((resolve) => ws.once("ping", resolve));
    await expect(f.sendEvent(f.directMessage({ channel: "D1", text: "hi" }), { timeoutMs: 100 })).rejects.toThrow(/not acked/);
  });
});
