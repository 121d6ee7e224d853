/**
 * The JSON shapes the fake Discord sends, built field for field from Discord's API reference
 * (docs.discord.com/developers): resources/user (user object), resources/guild (guild, guild
 * member, role), resources/channel (channel object, channel types), resources/message (message
 * object, message types, message reference, allowed mentions), resources/webhook (webhook
 * object), topics/gateway-events (READY, GUILD_CREATE extra fields, MESSAGE_CREATE extra
 * fields: guild_id, member, mentions[].member, channel_type), topics/gateway (intents),
 * reference (snowflakes, error messages with JSON error codes) and topics/opcodes-and-status-codes.
 *
 * What discord.js reads from them is in node_modules/discord.js/src: structures/Guild.js
 * (`_patch`: channels, roles, members), util/Channels.js (`createChannel`: a channel without
 * guild becomes a DMChannel only when it has `recipients` or type 1), client/actions/Action.js
 * (`getChannel`: MESSAGE_CREATE `channel_type` 1 + author make the partial DM channel) and
 * structures/Message.js (`_patch`).
 */

/** Discord's epoch (reference#snowflakes): the first second of 2015, in ms. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** Gateway intents (topics/gateway#list-of-intents). */
export const Intents = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildMessages: 1 << 9,
  GuildMessageTyping: 1 << 11,
  DirectMessages: 1 << 12,
  DirectMessageTyping: 1 << 14,
  MessageContent: 1 << 15,
} as const;

/** Channel types (resources/channel#channel-object-channel-types) the fake models. */
export const ChannelTypes = { GuildText: 0, DM: 1, GuildVoice: 2, GuildCategory: 4, GuildAnnouncement: 5, AnnouncementThread: 10, PublicThread: 11, PrivateThread: 12 } as const;

/** Threads are channels of their own, with a `parent_id` (topics/threads). */
export function isThreadType(type: number): boolean {
  return type === ChannelTypes.AnnouncementThread || type === ChannelTypes.PublicThread || type === ChannelTypes.PrivateThread;
}

/** Message types (resources/message#message-object-message-types). */
export const MessageTypes = { Default: 0, Reply: 19 } as const;

export type Snowflake = string;

export interface FakeUser {
  id: Snowflake;
  username: string;
  discriminator?: string;
  global_name?: string | null;
  avatar?: string | null;
  bot?: boolean;
}

export interface FakeChannelConfig {
  id: Snowflake;
  name: string;
  /** A guild channel type; 0 (text) when left out; a thread (10, 11, 12) names its channel in `parent_id`. */
  type?: number;
  topic?: string | null;
  position?: number;
  parent_id?: Snowflake | null;
}

export interface FakeGuildConfig {
  id: Snowflake;
  name: string;
  channels: FakeChannelConfig[];
  /** User ids of the members; every configured user (and always the bot) when left out. */
  members?: Snowflake[];
  owner_id?: Snowflake;
}

/** Increasing snowflake strings built from the clock (reference#snowflakes-snowflake-id-format-structure-left-to-right). */
export function snowflakeGenerator(): () => Snowflake {
  let last = 0n;
  return () => {
    let id = (BigInt(Date.now()) - DISCORD_EPOCH) << 22n;
    if (id <= last) id = last + 1n;
    last = id;
    return id.toString();
  };
}

export type Json = Record<string, unknown>;

/** resources/user#user-object */
export function userPayload(user: FakeUser): Json {
  return {
    id: user.id,
    username: user.username,
    discriminator: user.discriminator ?? "0",
    global_name: user.global_name ?? null,
    avatar: user.avatar ?? null,
    bot: user.bot ?? false,
    system: false,
    public_flags: 0,
    flags: 0,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
  };
}

/** resources/guild#guild-member-object; `user` is left out where the docs leave it out (MESSAGE_CREATE member). */
export function memberPayload(user: FakeUser | null, joinedAt: string): Json {
  const member: Json = {
    nick: null,
    avatar: null,
    banner: null,
    roles: [],
    joined_at: joinedAt,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  };
  if (user) member["user"] = userPayload(user);
  return member;
}

/** resources/guild#role-object: the @everyone role has the guild's id. */
export function everyoneRolePayload(guildId: Snowflake): Json {
  return {
    id: guildId,
    name: "@everyone",
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: 0,
    // VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY | ADD_REACTIONS | EMBED_LINKS | ATTACH_FILES
    permissions: String((1n << 10n) | (1n << 11n) | (1n << 16n) | (1n << 6n) | (1n << 14n) | (1n << 15n)),
    managed: false,
    mentionable: false,
    flags: 0,
  };
}

export interface ChannelState {
  id: Snowflake;
  type: number;
  guild_id?: Snowflake;
  name?: string;
  topic?: string | null;
  position?: number;
  parent_id?: Snowflake | null;
  /** DM channels: the other user. */
  recipient_id?: Snowflake;
  last_message_id: Snowflake | null;
  /** A thread no dispatch told the client of (not in GUILD_CREATE, no THREAD_CREATE): it learns of it from a message in it. */
  unannounced?: boolean;
}

/** resources/channel#channel-object (guild text channel, thread, or DM with `recipients`). */
export function channelPayload(channel: ChannelState, users: ReadonlyMap<string, FakeUser>, withGuildId = true): Json {
  if (channel.type === ChannelTypes.DM) {
    const recipient = users.get(channel.recipient_id ?? "");
    return {
      id: channel.id,
      type: ChannelTypes.DM,
      last_message_id: channel.last_message_id,
      flags: 0,
      recipients: recipient ? [userPayload(recipient)] : [],
    };
  }
  const payload: Json = {
    id: channel.id,
    type: channel.type,
    name: channel.name,
    position: channel.position ?? 0,
    parent_id: channel.parent_id ?? null,
    topic: channel.topic ?? null,
    nsfw: false,
    permission_overwrites: [],
    rate_limit_per_user: 0,
    last_message_id: channel.last_message_id,
    flags: 0,
  };
  if (withGuildId) payload["guild_id"] = channel.guild_id;
  if (isThreadType(channel.type)) {
    // resources/channel#thread-metadata-object, and the thread-only channel fields.
    payload["owner_id"] = null;
    payload["message_count"] = 0;
    payload["member_count"] = 1;
    payload["total_message_sent"] = 0;
    payload["thread_metadata"] = { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date(0).toISOString(), locked: false, create_timestamp: new Date(0).toISOString() };
  }
  return payload;
}

/** resources/guild#guild-object: the fields every guild object carries. */
export function guildPayload(guild: FakeGuildConfig, applicationId: Snowflake | null = null): Json {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    icon_hash: null,
    splash: null,
    discovery_splash: null,
    owner_id: guild.owner_id ?? "1",
    afk_channel_id: null,
    afk_timeout: 300,
    widget_enabled: false,
    widget_channel_id: null,
    verification_level: 0,
    default_message_notifications: 1,
    explicit_content_filter: 0,
    roles: [everyoneRolePayload(guild.id)],
    emojis: [],
    features: [],
    mfa_level: 0,
    application_id: applicationId,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    max_presences: null,
    max_members: 500_000,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: "en-US",
    public_updates_channel_id: null,
    max_video_channel_users: 25,
    max_stage_video_channel_users: 50,
    nsfw_level: 0,
    stickers: [],
    premium_progress_bar_enabled: false,
    safety_alerts_channel_id: null,
    incidents_data: null,
  };
}

/**
 * The message object (resources/message#message-object) as REST returns it. `guild_id`,
 * `member` and `mentions[].member` are gateway extra fields, added by `gatewayMessage`.
 */
export interface MessagePayload extends Json {
  id: Snowflake;
  channel_id: Snowflake;
  author: Json;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: Json[];
  mention_roles: Snowflake[];
  attachments: Json[];
  embeds: Json[];
  pinned: boolean;
  type: number;
  flags: number;
  components: Json[];
}

/** MESSAGE_CREATE's `d`: the message plus the gateway's extra fields. */
export type GatewayMessagePayload = MessagePayload & { channel_type: number; guild_id?: Snowflake; member?: Json };

/** topics/gateway-events#message-create-message-create-extra-fields */
export function gatewayMessage(
  message: MessagePayload,
  channel: ChannelState,
  memberOf: (userId: Snowflake) => Json | null,
): GatewayMessagePayload {
  const payload: GatewayMessagePayload = { ...message, channel_type: channel.type };
  if (channel.guild_id) {
    payload["guild_id"] = channel.guild_id;
    if (!message["webhook_id"]) {
      const member = memberOf(String(message.author["id"]));
      if (member) payload["member"] = member;
    }
    payload["mentions"] = message.mentions.map((user) => {
      const member = memberOf(String(user["id"]));
      return member ? { ...user, member } : user;
    });
  }
  return payload;
}

/** A message as an app without the MESSAGE_CONTENT intent sees it (topics/gateway#message-content-intent). */
export function withoutContent(message: Json): Json {
  return { ...message, content: "", embeds: [], attachments: [], components: [], poll: undefined };
}

/** reference#error-messages: the JSON error body with its nested `errors`. */
export function formError(field: string, code: string, message: string): Json {
  return { message: "Invalid Form Body", code: 50035, errors: { [field]: { _errors: [{ code, message }] } } };
}

/** reference#error-messages: a plain error (`{ message, code }`). */
export function apiError(code: number, message: string): Json {
  return { message, code };
}
