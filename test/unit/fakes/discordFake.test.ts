/**
 * The fake Discord (test/support/fakes/discord) against the real discord.js 14: login over
 * GET /gateway/bot + HELLO/IDENTIFY/READY/GUILD_CREATE, MESSAGE_CREATE into `messageCreate`,
 * replies, nonces, edits, typing, webhooks, DMs, a 429 waited out by @discordjs/rest, and a
 * dropped connection resumed with a replayed MESSAGE_CREATE (the duplicate a bridge must drop).
 */
import { once } from "node:events";
import { constants as zlibConstants, createInflate } from "node:zlib";
import {
  ChannelType,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  Options,
  Partials,
  type ClientOptions,
  type Message,
  type TextChannel,
} from "discord.js";
import { WebSocket } from "ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Intents, startFakeDiscord, type FakeDiscord } from "../../support/fakes/discord/index.ts";

const INTENTS = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages];

let fake: FakeDiscord;
const clients: Client[] = [];

beforeEach(async () => {
  fake = await startFakeDiscord({ heartbeatIntervalMs: 1000 });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.destroy()));
  await fake.close();
});

/** A discord.js client pointed at the fake, logged in and past `clientReady`. */
async function readyClient(options: Partial<ClientOptions> = {}): Promise<Client> {
  const client = new Client({
    intents: INTENTS,
    partials: [Partials.Channel],
    rest: { api: fake.apiUrl },
    ...options,
  });
  clients.push(client);
  const ready = once(client, Events.ClientReady);
  await client.login(fake.token);
  await ready;
  return client;
}

/** The next `messageCreate` passing `filter` (the bot's own echoes are skipped by default). */
function nextMessage(client: Client, filter: (m: Message) => boolean = (m) => !m.author.bot, timeoutMs = 3000): Promise<Message> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off(Events.MessageCreate, listener);
      reject(new Error("no messageCreate in time"));
    }, timeoutMs);
    const listener = (message: Message) => {
      if (!filter(message)) return;
      clearTimeout(timer);
      client.off(Events.MessageCreate, listener);
      resolve(message);
    };
    client.on(Events.MessageCreate, listener);
  });
}

const general = (client: Client) => client.channels.cache.get("300") as TextChannel;

describe("fake Discord with the real discord.js", () => {
  it("logs in: GET /gateway/bot, IDENTIFY with the intents, READY, then the guild and its channel are cached", async () => {
    const client = await readyClient();
    expect(client.user?.id).toBe("100");
    expect(client.user?.bot).toBe(true);
    expect(fake.calls("GET /gateway/bot")).toHaveLength(1);
    expect(fake.identifies).toHaveLength(1);
    expect(fake.identifies[0].token).toBe(fake.token);
    expect(fake.identifies[0].intents).toBe(Intents.Guilds | Intents.GuildMessages | Intents.MessageContent | Intents.DirectMessages);
    expect(fake.connectionUrls[0]).toBe("/gateway?v=10&encoding=json");
    expect(client.guilds.cache.get("200")?.name).toBe("Ensoul Test Guild");
    const channel = client.channels.cache.get("300");
    expect(channel?.type).toBe(ChannelType.GuildText);
    expect(channel?.isTextBased()).toBe(true);
  });

  it("a wrong token is refused: REST 401 makes login reject with TokenInvalid", async () => {
    const client = new Client({ intents: INTENTS, rest: { api: fake.apiUrl } });
    clients.push(client);
    await expect(client.login("not-the-token")).rejects.toThrow(/invalid token/i);
    expect(fake.calls("GET /gateway/bot")[0].status).toBe(401);
  });

  it("delivers an injected MESSAGE_CREATE as messageCreate, with content, author, member and the bot mention", async () => {
    const client = await readyClient();
    const arriving = nextMessage(client);
    const sent = fake.messageCreate({ channel_id: "300", author: "400", content: "<@100> hello there" });
    const message = await arriving;
    expect(message.id).toBe(sent.id);
    expect(message.content).toBe("<@100> hello there");
    expect(message.author.username).toBe("alice");
    expect(message.guildId).toBe("200");
    expect(message.member?.id).toBe("400");
    expect(message.mentions.users.has("100")).toBe(true);
    expect(message.mentions.has(client.user!)).toBe(true);
    expect(message.channel.id).toBe("300");
  });

  it("message.reply posts a type 19 message with message_reference, and Discord echoes it as the bot's own MESSAGE_CREATE", async () => {
    const client = await readyClient();
    const arriving = nextMessage(client);
    fake.messageCreate({ content: "<@100> ping" });
    const message = await arriving;
    const echo = nextMessage(client, (m) => m.author.id === "100");
    const reply = await message.reply("hi");
    expect(reply.reference?.messageId).toBe(message.id);
    const stored = fake.messages("300").find((m) => m.id === reply.id)!;
    expect(stored.content).toBe("hi");
    expect(stored.type).toBe(19);
    expect(stored.message_reference).toMatchObject({ message_id: message.id, channel_id: "300", guild_id: "200" });
    expect(fake.calls("POST /channels/300/messages")[0].body).toMatchObject({ message_reference: { message_id: message.id, fail_if_not_exists: true } });
    expect((await echo).id).toBe(reply.id);
  });

  it("channel.send with the same nonce and enforceNonce creates one message", async () => {
    const client = await readyClient();
    const channel = general(client);
    const first = await channel.send({ content: "only once", nonce: "nonce-123", enforceNonce: true });
    const second = await channel.send({ content: "only once", nonce: "nonce-123", enforceNonce: true });
    expect(second.id).toBe(first.id);
    expect(fake.calls("POST /channels/300/messages")).toHaveLength(2);
    expect(fake.messages("300").filter((m) => m.content === "only once")).toHaveLength(1);
    expect(fake.messages("300")[0].nonce).toBe("nonce-123");
    // Without enforce_nonce the nonce is only echoed back: a second message is created.
    await channel.send({ content: "twice", nonce: "nonce-456" });
    await channel.send({ content: "twice", nonce: "nonce-456" });
    expect(fake.messages("300").filter((m) => m.content === "twice")).toHaveLength(2);
  });

  it("message.edit PATCHes the content, sets edited_timestamp and keeps the history", async () => {
    const client = await readyClient();
    const sent = await general(client).send("draft");
    const edited = await sent.edit("final answer");
    expect(edited.content).toBe("final answer");
    expect(edited.editedTimestamp).not.toBeNull();
    const stored = fake.messages("300").find((m) => m.id === sent.id)!;
    expect(stored.content).toBe("final answer");
    expect(stored.edited_timestamp).not.toBeNull();
    expect(stored.history.map((h) => h.content)).toEqual(["draft"]);
    expect(fake.calls(`PATCH /channels/300/messages/${sent.id}`)).toHaveLength(1);
  });

  it("channel.sendTyping is counted; content over 2000 characters is Discord's 50035 error", async () => {
    const client = await readyClient();
    const channel = general(client);
    await channel.sendTyping();
    await channel.sendTyping();
    expect(fake.typing("300")).toBe(2);
    const error = await channel.send("x".repeat(2001)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect((error as DiscordAPIError).code).toBe(50035);
    expect((error as DiscordAPIError).status).toBe(400);
    expect(fake.messages("300")).toHaveLength(0);
  });

  it("a 429 with Retry-After is waited out by @discordjs/rest and the message is posted once", async () => {
    const client = await readyClient();
    const rateLimited: number[] = [];
    client.rest.on("rateLimited", (info) => rateLimited.push(info.retryAfter));
    fake.rateLimitNext("POST /channels/:id/messages", 0.4);
    const started = Date.now();
    const sent = await general(client).send("patient");
    const elapsed = Date.now() - started;
    const posts = fake.calls("POST /channels/300/messages");
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(fake.messages("300").filter((m) => m.content === "patient")).toHaveLength(1);
    expect(fake.messages("300")[0].id).toBe(sent.id);
    // Retry-After says 1 (whole seconds, as Discord sends it), but with X-RateLimit-Remaining 0
    // @discordjs/rest waits for the bucket's X-RateLimit-Reset-After (0.4 s) plus its offset.
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(rateLimited).toHaveLength(1);
  });

  it("after a dropped connection the client RESUMEs at resume_gateway_url and a redelivered MESSAGE_CREATE arrives twice", async () => {
    // No message cache, so discord.js cannot hide the duplicate: the bridge sees what Discord sent.
    const client = await readyClient({ makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 0 }) });
    const seen: string[] = [];
    client.on(Events.MessageCreate, (m) => {
      if (!m.author.bot) seen.push(m.id);
    });
    const resumed = once(client, Events.ShardResume);
    const first = fake.messageCreate({ content: "before the drop" });
    await fake.waitFor(() => seen.length === 1);
    await fake.dropConnection({ code: 4000, redeliver: 1 });
    await resumed;
    await fake.waitFor(() => seen.length === 2);
    expect(seen).toEqual([first.id, first.id]);
    expect(fake.resumes).toBe(1);
    expect(fake.identifies).toHaveLength(1);
    expect(fake.connections).toBe(2);
    expect(fake.connectionUrls[1]).toBe("/gateway-resume?v=10&encoding=json");
    // The resumed session keeps working.
    const after = nextMessage(client);
    fake.messageCreate({ content: "after the drop" });
    expect((await after).content).toBe("after the drop");
  });

  it("with its default message cache discord.js swallows the replayed MESSAGE_CREATE; the raw event still arrives twice", async () => {
    const client = await readyClient();
    const events: string[] = [];
    const raws: string[] = [];
    client.on(Events.MessageCreate, (m) => events.push(m.id));
    client.on(Events.Raw, (packet: { t: string | null; d: { id?: string } }) => {
      if (packet.t === "MESSAGE_CREATE") raws.push(String(packet.d.id));
    });
    const message = fake.messageCreate({ content: "replayed" });
    await fake.waitFor(() => events.length === 1);
    await fake.dropConnection({ abrupt: true, redeliver: 1 });
    await fake.waitFor(() => raws.length === 2);
    expect(raws).toEqual([message.id, message.id]);
    expect(events).toEqual([message.id]);
    expect(fake.resumes).toBe(1);
  });

  it("events dispatched while disconnected are replayed on RESUME; op 7 RECONNECT also resumes", async () => {
    const client = await readyClient();
    const seen: string[] = [];
    client.on(Events.MessageCreate, (m) => {
      if (!m.author.bot) seen.push(m.content);
    });
    fake.sendReconnect();
    await fake.waitFor((f) => f.liveConnections === 0);
    // Now nobody is connected for ~500 ms (discord.js pauses before reconnecting).
    fake.messageCreate({ content: "while away" });
    await fake.waitFor(() => seen.length === 1);
    expect(seen).toEqual(["while away"]);
    expect(fake.resumes).toBe(1);
    expect(fake.identifies).toHaveLength(1);
  });

  it("op 9 INVALID_SESSION (not resumable) makes the client IDENTIFY again", async () => {
    // discord.js spaces IDENTIFYs 5 s apart by default; a no-op throttler keeps the test fast.
    const client = await readyClient({ ws: { buildIdentifyThrottler: async () => ({ waitForIdentify: async () => undefined }) } });
    fake.invalidateSession(false);
    await fake.waitFor((f) => f.identifies.length === 2, 4000);
    expect(fake.resumes).toBe(0);
    const arriving = nextMessage(client);
    fake.messageCreate({ content: "new session" });
    expect((await arriving).content).toBe("new session");
  });

  it("unanswered heartbeats make discord.js call the connection a zombie and resume", async () => {
    const client = await readyClient();
    fake.setHeartbeatAcks(false);
    await fake.waitFor((f) => f.connections === 2, 4000);
    fake.setHeartbeatAcks(true);
    await fake.waitFor((f) => f.resumes === 1, 2000);
    expect(fake.identifies).toHaveLength(1);
    const arriving = nextMessage(client);
    fake.messageCreate({ content: "still here" });
    expect((await arriving).content).toBe("still here");
  });

  it("files go as multipart (payload_json + files[0]) and come back as attachments", async () => {
    const client = await readyClient();
    const sent = await general(client).send({ content: "see attached", files: [{ attachment: Buffer.from("hello file"), name: "note.txt" }] });
    expect(sent.attachments.first()?.name).toBe("note.txt");
    const [stored] = fake.messages("300");
    expect(stored.content).toBe("see attached");
    expect(stored.attachments).toMatchObject([{ filename: "note.txt", size: 10 }]);
  });

  it("the wire shapes: 401 without the bot token, 429 headers and body, 404 for unknown routes and channels", async () => {
    const post = (path: string, auth: string | null) =>
      fetch(`${fake.apiUrl}/v10${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify({ content: "x" }),
      });
    const unauthorized = await post("/channels/300/messages", "Bot wrong");
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toEqual({ message: "401: Unauthorized", code: 0 });
    fake.rateLimitNext("/channels/300/messages", 2.5, 1, { global: true });
    const limited = await post("/channels/300/messages", `Bot ${fake.token}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3");
    expect(limited.headers.get("x-ratelimit-global")).toBe("true");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(await limited.json()).toEqual({ message: "You are being rate limited.", retry_after: 2.5, global: true });
    expect(fake.messages()).toHaveLength(0);
    expect((await post("/channels/300/messages", `Bot ${fake.token}`)).status).toBe(200);
    const unknownChannel = await post("/channels/999/messages", `Bot ${fake.token}`);
    expect(unknownChannel.status).toBe(404);
    expect(await unknownChannel.json()).toEqual({ message: "Unknown Channel", code: 10003 });
    expect((await post("/nowhere", `Bot ${fake.token}`)).status).toBe(404);
    expect(fake.calls("POST /channels/300/messages").map((c) => c.status)).toEqual([401, 429, 200]);
  });

  it("a DM arrives on a partial DM channel (Partials.Channel) and the reply goes to that DM channel", async () => {
    const client = await readyClient();
    const arriving = nextMessage(client);
    fake.messageCreate({ dm: true, author: "401", content: "psst" });
    const message = await arriving;
    expect(message.channel.type).toBe(ChannelType.DM);
    expect(message.guildId).toBeNull();
    expect(message.author.username).toBe("bob");
    const dmId = fake.dmChannelId("401");
    expect(message.channelId).toBe(dmId);
    await message.reply("whispered back");
    expect(fake.messages(dmId).map((m) => m.content)).toEqual(["psst", "whispered back"]);
    // The DM channel is no longer partial once a message set its lastMessageId: no REST to reuse it.
    await (await client.users.fetch("401")).send("again");
    expect(fake.calls("POST /users/@me/channels")).toHaveLength(0);
    expect(fake.messages(dmId).at(-1)?.content).toBe("again");
    // A user who never wrote gets a DM channel over REST (Create DM), then the message.
    await (await client.users.fetch("400")).send("hello alice");
    expect(fake.calls("POST /users/@me/channels")).toHaveLength(1);
    expect(fake.messages(fake.dmChannelId("400")).map((m) => m.content)).toEqual(["hello alice"]);
  });

  it("webhooks: create, then execute with a username and avatar_url", async () => {
    const client = await readyClient();
    const webhook = await general(client).createWebhook({ name: "Ensoul Relay" });
    const posted = await webhook.send({ content: "spoken as a soul", username: "Claudius", avatarURL: "https://example.test/c.png" });
    expect(posted.webhookId).toBe(webhook.id);
    expect(posted.author.username).toBe("Claudius");
    const [stored] = fake.webhookMessages();
    expect(stored.content).toBe("spoken as a soul");
    expect(stored.webhook).toEqual({ username: "Claudius", avatar_url: "https://example.test/c.png" });
    expect(fake.calls("POST /webhooks/:id/:token")[0].query).toEqual({ wait: "true" });
  });

  it("without the MESSAGE_CONTENT intent a guild message that does not mention the bot arrives with empty content", async () => {
    const client = await readyClient({ intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages] });
    const blank = nextMessage(client);
    fake.messageCreate({ content: "not for you" });
    expect((await blank).content).toBe("");
    const mentioned = nextMessage(client);
    fake.messageCreate({ content: "<@100> for you" });
    expect((await mentioned).content).toBe("<@100> for you");
  });

  it("compress=zlib-stream: every frame is a Z_SYNC_FLUSH piece of one deflate stream", async () => {
    const ws = new WebSocket(`${fake.gatewayUrl}?v=10&encoding=json&compress=zlib-stream`);
    const inflate = createInflate({ finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const texts: string[] = [];
    inflate.on("data", (chunk: Buffer) => texts.push(chunk.toString()));
    ws.on("message", (data: Buffer) => inflate.write(data));
    await fake.waitFor(() => texts.length >= 1);
    expect(JSON.parse(texts[0])).toMatchObject({ op: 10, d: { heartbeat_interval: 1000 } });
    ws.send(JSON.stringify({ op: 2, d: { token: fake.token, intents: Intents.Guilds, properties: {} } }));
    await fake.waitFor(() => texts.join("").includes("GUILD_CREATE"));
    ws.close(1000);
    inflate.close();
  });
});
