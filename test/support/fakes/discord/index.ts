/**
 * A local fake of Discord that speaks Discord's real REST and gateway protocols, so a bridge
 * built on discord.js can be tested end to end with the real library:
 *
 *   const fake = await startFakeDiscord({ heartbeatIntervalMs: 1000 });
 *   const client = new Client({ intents, rest: { api: fake.apiUrl } });
 *   await client.login(fake.token);
 *
 * One node:http server on 127.0.0.1 (port 0) serves REST under `/api/v10` (rest.ts) and the
 * gateway WebSocket on `/gateway` and `/gateway-resume` (gateway.ts; the second is the
 * `resume_gateway_url`, so tests can see that a client resumes where READY told it to). The
 * world (users, guilds, channels, messages) is store.ts; the JSON shapes are payloads.ts.
 * Which events reach a session follows topics/gateway#gateway-intents (MESSAGE_CREATE needs
 * GUILD_MESSAGES or DIRECT_MESSAGES; without MESSAGE_CONTENT the content is blanked except in
 * DMs, the bot's own messages and messages mentioning it) and the gateway-events page.
 * How discord.js connects is in node_modules/discord.js/src/client/websocket/WebSocketManager.js
 * (GET /gateway/bot, then @discordjs/ws).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeGateway, type DropOptions, type IdentifyRecord } from "./gateway.ts";
import {
  ChannelTypes,
  Intents,
  channelPayload,
  isThreadType,
  gatewayMessage,
  guildPayload,
  userPayload,
  withoutContent,
  type FakeGuildConfig,
  type FakeUser,
  type GatewayMessagePayload,
  type Json,
  type MessagePayload,
  type Snowflake,
} from "./payloads.ts";
import { FakeRest, matchesRoute, type CallRecord, type FailureOptions, type RouteMatcher } from "./rest.ts";
import { DiscordStore, type AllowedMentions, type MessageReferenceInput, type StoredMessage } from "./store.ts";

export { Intents, ChannelTypes, MessageTypes, isThreadType } from "./payloads.ts";
export type { FakeUser, FakeGuildConfig, FakeChannelConfig, MessagePayload, GatewayMessagePayload, Snowflake, Json } from "./payloads.ts";
export type { CallRecord, FailureOptions, RouteMatcher } from "./rest.ts";
export type { DropOptions, IdentifyRecord } from "./gateway.ts";
export type { AllowedMentions, MessageReferenceInput } from "./store.ts";

export interface FakeDiscordOptions {
  /** The bot token REST (`Authorization: Bot <token>`) and IDENTIFY must carry. */
  token?: string;
  botUser?: FakeUser;
  applicationId?: Snowflake;
  /** Users besides the bot; default alice (400) and bob (401). */
  users?: FakeUser[];
  /** Default: guild 200 with text channel 300 (#general), every user a member. */
  guilds?: FakeGuildConfig[];
  /** HELLO's heartbeat_interval; Discord's is 41250. Use ~1000 in tests. */
  heartbeatIntervalMs?: number;
  /** How long `enforce_nonce` remembers a nonce ("the past few minutes"); default 5 minutes; 0: not at all (a repeat after the window). */
  nonceWindowMs?: number;
  /** Send MESSAGE_CREATE/UPDATE/DELETE for the bot's own REST and webhook messages, as Discord does (default true). */
  echoOwnMessages?: boolean;
  /** Gate dispatches by the session's intents, as Discord does (default true). */
  enforceIntents?: boolean;
  /** Intents IDENTIFY may not ask for (closes 4014), e.g. `Intents.MessageContent`. */
  disallowedIntents?: number;
  /** Already-received dispatches replayed again on every RESUME (at-least-once delivery); default 0. */
  redeliverOnResume?: number;
}

/** What a test injects as a user's message (MESSAGE_CREATE). */
export interface InjectedMessage {
  /** Default: the first text channel of the first guild (unless `dm`). */
  channel_id?: Snowflake;
  /** Send it in the DM channel between the author and the bot. */
  dm?: boolean;
  /** A user id known to the fake, or a user (added to the fake). Default: the first non-bot user. */
  author?: Snowflake | FakeUser;
  content: string;
  /** Mentioned users besides those written `<@id>` in the content. */
  mentions?: Array<Snowflake | FakeUser>;
  /** Checked against the channel's guild. */
  guild_id?: Snowflake;
  /** Make it a reply (type 19) to this message. */
  message_reference?: Snowflake | MessageReferenceInput;
  id?: Snowflake;
  nonce?: string | number;
  embeds?: Json[];
  attachments?: Json[];
}

/** A message as the fake holds it now, with what it was before each edit. */
export type RecordedMessage = MessagePayload & {
  history: Array<{ content: string; replacedAt: string }>;
  deleted: boolean;
  allowed_mentions?: AllowedMentions;
  /** Webhook executions: the username and avatar_url asked for. */
  webhook?: { username?: string; avatar_url?: string };
};

export interface FakeDiscord {
  /** For discord.js `rest: { api }`: `http://127.0.0.1:PORT/api` (the client appends `/v10`). */
  readonly apiUrl: string;
  /** What `GET /gateway/bot` returns: `ws://127.0.0.1:PORT/gateway`. */
  readonly gatewayUrl: string;
  /** READY's `resume_gateway_url`: `ws://127.0.0.1:PORT/gateway-resume`. */
  readonly resumeGatewayUrl: string;
  readonly port: number;
  readonly token: string;
  readonly botUser: FakeUser;
  readonly applicationId: Snowflake;
  /** Every IDENTIFY received (token, intents, properties, shard...) with the session it opened. */
  readonly identifies: readonly IdentifyRecord[];
  /** Successful RESUMEs. */
  readonly resumes: number;
  /** WebSocket connections accepted. */
  readonly connections: number;
  /** WebSocket connections open now. */
  readonly liveConnections: number;
  /** The path and query of each connection, e.g. `/gateway?v=10&encoding=json`. */
  readonly connectionUrls: readonly string[];
  readonly heartbeats: number;

  /** Sends a dispatch (op 0) to every live session and keeps it in the session's replay buffer. */
  dispatch(t: string, d: unknown): number;
  /** Creates a user's message and dispatches MESSAGE_CREATE (gated by intents); returns the full payload. */
  messageCreate(message: InjectedMessage): GatewayMessagePayload;
  /** Closes the gateway connection(s): code 4000 by default, `"abrupt"` for a TCP reset without close frame. */
  dropConnection(how?: number | "abrupt" | DropOptions): Promise<void>;
  /** op 7 RECONNECT. */
  sendReconnect(): void;
  /** op 9 INVALID_SESSION with the given resumable flag (default false: the client must IDENTIFY again). */
  invalidateSession(resumable?: boolean): void;
  /** op 1 from the server. */
  requestHeartbeat(): void;
  /** Stop (or resume) answering heartbeats, so the client finds its connection a zombie. */
  setHeartbeatAcks(enabled: boolean): void;
  /** The next `times` calls matching get HTTP 429 and are not applied. */
  rateLimitNext(route: RouteMatcher, retryAfterSeconds: number, times?: number, options?: { global?: boolean }): void;
  /**
   * The next `times` calls matching fail: applied first (default), as when Discord did the work
   * and its answer was lost, or not; answered with `status` (default 500) or, with `reset`, a
   * connection closed without an answer.
   */
  failNext(route: RouteMatcher, failure?: FailureOptions, times?: number): void;
  /** Forgets the failures `failNext` set that no call has met yet. */
  clearFailures(): void;
  /**
   * A thread in a guild channel (type 11 unless `type` says otherwise). Announced with
   * THREAD_CREATE, as Discord does, unless `announce` is false: then the client first hears of
   * it from a message in it.
   */
  createThread(thread: { parent_id: Snowflake; id?: Snowflake; name?: string; type?: number; announce?: boolean }): Snowflake;

  messages(channelId?: Snowflake): RecordedMessage[];
  calls(route?: RouteMatcher): CallRecord[];
  typing(channelId: Snowflake): number;
  webhookMessages(): RecordedMessage[];
  reactions(): ReadonlyArray<{ channel_id: Snowflake; message_id: Snowflake; emoji: string; removed: boolean }>;
  /** The DM channel id between a user and the bot (created if needed). */
  dmChannelId(userId: Snowflake): Snowflake;
  /** Resolves with the predicate's first truthy value; rejects after `timeoutMs` (default 5000). */
  waitFor<T>(predicate: (fake: FakeDiscord) => T | null | undefined | false, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

const DEFAULT_BOT: FakeUser = { id: "100", username: "ensoul", discriminator: "0", bot: true };
const DEFAULT_USERS: FakeUser[] = [
  { id: "400", username: "alice", discriminator: "0", global_name: "Alice" },
  { id: "401", username: "bob", discriminator: "0", global_name: "Bob" },
];
const DEFAULT_GUILDS: FakeGuildConfig[] = [{ id: "200", name: "Ensoul Test Guild", owner_id: "400", channels: [{ id: "300", name: "general", type: 0 }] }];

export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const token = options.token ?? "discord-test-token";
  const botUser = options.botUser ?? DEFAULT_BOT;
  const applicationId = options.applicationId ?? botUser.id;
  const store = new DiscordStore(botUser, options.users ?? DEFAULT_USERS, options.guilds ?? DEFAULT_GUILDS);
  const enforceIntents = options.enforceIntents ?? true;
  const echo = options.echoOwnMessages ?? true;
  const watchers = new Set<() => void>();
  const changed = () => watchers.forEach((w) => w());
  let port = 0;
  const base = () => `127.0.0.1:${port}`;

  const messageFor = (stored: StoredMessage, intents: number): Json | undefined => {
    const channel = store.channels.get(stored.payload.channel_id);
    if (!channel) return undefined;
    const dm = channel.type === ChannelTypes.DM;
    if (enforceIntents && !(intents & (dm ? Intents.DirectMessages : Intents.GuildMessages))) return undefined;
    const payload = gatewayMessage(stored.payload, channel, (id) => (channel.guild_id ? store.member(channel.guild_id, id, false) : null));
    const own = stored.payload.author["id"] === botUser.id;
    const mentionsBot = stored.payload.mentions.some((u) => u["id"] === botUser.id);
    if (enforceIntents && !(intents & Intents.MessageContent) && !dm && !own && !mentionsBot) return withoutContent(payload);
    return payload;
  };

  const gateway = new FakeGateway({
    token,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
    disallowedIntents: options.disallowedIntents ?? 0,
    redeliverOnResume: options.redeliverOnResume ?? 0,
    resumeUrl: () => `ws://${base()}/gateway-resume`,
    ready: () => readyPayload(store, applicationId),
    afterReady: (intents) => (intents & Intents.Guilds || !enforceIntents ? [...store.guilds.values()].map((g) => ({ t: "GUILD_CREATE", d: guildCreatePayload(store, g, intents) })) : []),
    changed,
  });

  const rest = new FakeRest(store, {
    token,
    applicationId,
    nonceWindowMs: options.nonceWindowMs ?? 5 * 60_000,
    gatewayUrl: () => `ws://${base()}/gateway`,
    messageCreated: (stored) => echo && gateway.dispatch("MESSAGE_CREATE", (intents: number) => messageFor(stored, intents)),
    messageUpdated: (stored) => echo && gateway.dispatch("MESSAGE_UPDATE", (intents: number) => messageFor(stored, intents)),
    messageDeleted: (stored) =>
      echo &&
      gateway.dispatch("MESSAGE_DELETE", (intents: number) => {
        const channel = store.channels.get(stored.payload.channel_id);
        const dm = channel?.type === ChannelTypes.DM;
        if (enforceIntents && !(intents & (dm ? Intents.DirectMessages : Intents.GuildMessages))) return undefined;
        return { id: stored.payload.id, channel_id: stored.payload.channel_id, ...(channel?.guild_id ? { guild_id: channel.guild_id } : {}) };
      }),
    changed,
  });

  const server: Server = createServer((req, res) => {
    rest.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ message: `fake Discord: ${String(error)}`, code: 0 }));
    });
  });
  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname.replace(/\/$/, "");
    if (path === "/gateway" || path === "/gateway-resume") gateway.handleUpgrade(req, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;

  const record = (stored: StoredMessage): RecordedMessage => {
    const copy = structuredClone(stored.payload) as RecordedMessage;
    copy.history = stored.history.map((h) => ({ ...h }));
    copy.deleted = stored.deleted;
    if (stored.allowedMentions) copy.allowed_mentions = structuredClone(stored.allowedMentions);
    if (stored.webhook) copy.webhook = { ...stored.webhook };
    return copy;
  };

  const fake: FakeDiscord = {
    apiUrl: `http://${base()}/api`,
    gatewayUrl: `ws://${base()}/gateway`,
    resumeGatewayUrl: `ws://${base()}/gateway-resume`,
    port,
    token,
    botUser,
    applicationId,
    get identifies() {
      return gateway.identifies;
    },
    get resumes() {
      return gateway.resumes;
    },
    get connections() {
      return gateway.connections;
    },
    get liveConnections() {
      return gateway.live.size;
    },
    get connectionUrls() {
      return gateway.connectionUrls;
    },
    get heartbeats() {
      return gateway.heartbeats;
    },
    dispatch: (t, d) => gateway.dispatch(t, d),
    messageCreate: (message) => injectMessage(store, message, (stored) => gateway.dispatch("MESSAGE_CREATE", (intents: number) => messageFor(stored, intents))),
    dropConnection: (how = 4000) => gateway.drop(typeof how === "number" ? { code: how } : how === "abrupt" ? { abrupt: true } : how),
    sendReconnect: () => gateway.sendReconnect(),
    invalidateSession: (resumable = false) => gateway.invalidateSessions(resumable),
    requestHeartbeat: () => gateway.requestHeartbeat(),
    setHeartbeatAcks: (enabled) => {
      gateway.ackHeartbeats = enabled;
    },
    rateLimitNext: (route, retryAfterSeconds, times = 1, opts = {}) => rest.rateLimitNext(route, retryAfterSeconds, times, opts.global ?? false),
    failNext: (route, failure = {}, times = 1) => rest.failNext(route, failure, times),
    clearFailures: () => rest.clearFailures(),
    createThread: (thread) => {
      const parent = store.channels.get(thread.parent_id);
      if (!parent?.guild_id) throw new Error(`fake Discord: no guild channel ${thread.parent_id} to start a thread in`);
      const id = thread.id ?? store.nextId();
      const state = store.addChannel(parent.guild_id, { id, name: thread.name ?? `thread-${id}`, type: thread.type ?? ChannelTypes.PublicThread, parent_id: parent.id });
      if (thread.announce === false) state.unannounced = true;
      else gateway.dispatch("THREAD_CREATE", (intents: number) => (intents & Intents.Guilds || !enforceIntents ? { ...channelPayload(state, store.users), newly_created: true } : undefined));
      return id;
    },
    messages: (channelId) => store.allMessages(channelId).map(record),
    calls: (route) => (route === undefined ? [...rest.calls] : rest.calls.filter((call) => matchesRoute(route, call))),
    typing: (channelId) => store.typing.get(channelId) ?? 0,
    webhookMessages: () => store.allMessages().filter((m) => m.payload["webhook_id"]).map(record),
    reactions: () => [...store.reactions],
    dmChannelId: (userId) => store.dmChannel(userId).id,
    waitFor: (predicate, timeoutMs = 5000) => waitFor(fake, watchers, predicate, timeoutMs),
    close: async () => {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/** topics/gateway-events#ready: guilds arrive as unavailable and follow as GUILD_CREATE. */
function readyPayload(store: DiscordStore, applicationId: Snowflake): Json {
  return {
    v: 10,
    user: { ...userPayload(store.botUser), verified: true, mfa_enabled: false, email: null },
    guilds: [...store.guilds.keys()].map((id) => ({ id, unavailable: true })),
    session_type: "normal",
    shard: [0, 1],
    application: { id: applicationId, flags: 0 },
    private_channels: [],
    presences: [],
    relationships: [],
    guild_join_requests: [],
    geo_ordered_rtc_regions: [],
    user_settings: {},
    _trace: ["fake-discord-gateway"],
  };
}

/** topics/gateway-events#guild-create: the guild plus joined_at, members, channels (without guild_id), active threads and the rest. */
function guildCreatePayload(store: DiscordStore, guild: FakeGuildConfig, intents: number): Json {
  const memberIds = intents & Intents.GuildMembers ? store.memberIds(guild.id) : [store.botUser.id];
  const all = [...store.channels.values()].filter((c) => c.guild_id === guild.id && !c.unannounced);
  // Active threads come apart from the channels, in `threads`, as Discord sends them.
  const channels = all.filter((c) => !isThreadType(c.type));
  const threads = all.filter((c) => isThreadType(c.type));
  return {
    ...guildPayload(guild, null),
    joined_at: new Date().toISOString(),
    large: false,
    unavailable: false,
    member_count: store.memberIds(guild.id).length,
    voice_states: [],
    members: memberIds.map((id) => store.member(guild.id, id, true)).filter((m) => m !== null),
    channels: channels.map((c) => channelPayload(c, store.users, false)),
    threads: threads.map((c) => channelPayload(c, store.users)),
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

function injectMessage(store: DiscordStore, input: InjectedMessage, dispatch: (stored: StoredMessage) => void): GatewayMessagePayload {
  const authorUser = resolveUser(store, input.author ?? firstHuman(store));
  const channel = input.dm ? store.dmChannel(authorUser.id) : store.channels.get(input.channel_id ?? firstTextChannel(store));
  if (!channel) throw new Error(`fake Discord: unknown channel ${String(input.channel_id)}`);
  if (input.guild_id !== undefined && input.guild_id !== channel.guild_id) {
    throw new Error(`fake Discord: channel ${channel.id} is not in guild ${input.guild_id}`);
  }
  const mentions = (input.mentions ?? []).map((m) => resolveUser(store, m).id);
  const reference = typeof input.message_reference === "string" ? { message_id: input.message_reference } : input.message_reference;
  const stored = store.createMessage({
    channel,
    author: userPayload(authorUser),
    content: input.content,
    mentions,
    reference,
    nonce: input.nonce,
    embeds: input.embeds,
    attachments: input.attachments,
    id: input.id,
  });
  dispatch(stored);
  return gatewayMessage(stored.payload, channel, (id) => (channel.guild_id ? store.member(channel.guild_id, id, false) : null));
}

function resolveUser(store: DiscordStore, user: Snowflake | FakeUser): FakeUser {
  if (typeof user !== "string") {
    if (!store.users.has(user.id)) store.users.set(user.id, user);
    return store.users.get(user.id)!;
  }
  const found = store.users.get(user);
  if (!found) throw new Error(`fake Discord: unknown user ${user}`);
  return found;
}

function firstHuman(store: DiscordStore): Snowflake {
  const human = [...store.users.values()].find((u) => !u.bot);
  if (!human) throw new Error("fake Discord: no non-bot user to author the message");
  return human.id;
}

function firstTextChannel(store: DiscordStore): Snowflake {
  const channel = [...store.channels.values()].find((c) => c.type === ChannelTypes.GuildText);
  if (!channel) throw new Error("fake Discord: no text channel");
  return channel.id;
}

function waitFor<T>(
  fake: FakeDiscord,
  watchers: Set<() => void>,
  predicate: (fake: FakeDiscord) => T | null | undefined | false,
  timeoutMs: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      clearInterval(poll);
      watchers.delete(check);
    };
    const check = () => {
      try {
        const value = predicate(fake);
        if (value) {
          finish();
          resolve(value);
        }
      } catch (error) {
        finish();
        reject(error as Error);
      }
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`fake Discord: waitFor timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const poll = setInterval(check, 20);
    watchers.add(check);
    check();
  });
}
