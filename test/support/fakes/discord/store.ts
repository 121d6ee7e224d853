/**
 * The fake Discord's world: users, guilds, channels, messages (with their edit history),
 * DM channels, webhooks and typing counts. REST handlers and injected gateway messages both
 * create messages here, so a message posted by the bot and one "typed by a user" look alike.
 *
 * Message semantics follow Discord's API reference, resources/message: "Create Message"
 * (nonce up to 25 characters; `enforce_nonce` returns the message created by the same author
 * with the same nonce in the past few minutes instead of creating another; replies are type 19
 * with `message_reference` and `referenced_message`; `allowed_mentions` decides which parsed
 * mentions land in `mentions`, `mention_roles`, `mention_everyone`, and whether the replied-to
 * author is mentioned), "Edit Message" (`edited_timestamp`) and reference#message-formatting
 * (`<@id>`, `<@!id>`, `<@&id>`, `@everyone`, `@here`).
 */
import {
  ChannelTypes,
  isThreadType,
  MessageTypes,
  memberPayload,
  snowflakeGenerator,
  userPayload,
  type ChannelState,
  type FakeChannelConfig,
  type FakeGuildConfig,
  type FakeUser,
  type Json,
  type MessagePayload,
  type Snowflake,
} from "./payloads.ts";

export interface AllowedMentions {
  parse?: string[];
  users?: string[];
  roles?: string[];
  replied_user?: boolean;
}

export interface MessageReferenceInput {
  message_id: Snowflake;
  channel_id?: Snowflake;
  guild_id?: Snowflake;
  fail_if_not_exists?: boolean;
  type?: number;
}

export interface CreateMessageInput {
  channel: ChannelState;
  author: Json;
  content: string;
  /** Explicit mentions (user ids), merged with those parsed from the content. */
  mentions?: Snowflake[];
  /** From REST; undefined means Discord's default (everything parsed, replied user pinged). */
  allowedMentions?: AllowedMentions;
  reference?: MessageReferenceInput;
  nonce?: string | number;
  tts?: boolean;
  embeds?: Json[];
  attachments?: Json[];
  webhookId?: Snowflake;
  id?: Snowflake;
}

export interface StoredMessage {
  payload: MessagePayload;
  /** Earlier contents, oldest first, with the time each was replaced. */
  history: Array<{ content: string; replacedAt: string }>;
  deleted: boolean;
  allowedMentions?: AllowedMentions;
  /** Webhook executions: the name and avatar asked for. */
  webhook?: { username?: string; avatar_url?: string };
  createdAtMs: number;
}

export interface WebhookState {
  id: Snowflake;
  token: string;
  channel_id: Snowflake;
  guild_id?: Snowflake;
  name: string;
  avatar: string | null;
}

/** A message that could not be referenced, for the REST layer to turn into Discord's error. */
export class UnknownReferenceError extends Error {}

const MENTION_USER = /<@!?(\d+)>/g;
const MENTION_ROLE = /<@&(\d+)>/g;

export class DiscordStore {
  readonly users = new Map<Snowflake, FakeUser>();
  readonly guilds = new Map<Snowflake, FakeGuildConfig>();
  readonly channels = new Map<Snowflake, ChannelState>();
  readonly webhooks = new Map<Snowflake, WebhookState>();
  readonly typing = new Map<Snowflake, number>();
  readonly reactions: Array<{ channel_id: Snowflake; message_id: Snowflake; emoji: string; removed: boolean }> = [];
  private readonly messageList: StoredMessage[] = [];
  private readonly messageById = new Map<Snowflake, StoredMessage>();
  private readonly joinedAt = new Date().toISOString();
  readonly nextId = snowflakeGenerator();

  constructor(
    readonly botUser: FakeUser,
    users: FakeUser[],
    guilds: FakeGuildConfig[],
  ) {
    for (const user of [botUser, ...users]) this.users.set(user.id, user);
    for (const guild of guilds) this.addGuild(guild);
  }

  private addGuild(guild: FakeGuildConfig): void {
    this.guilds.set(guild.id, guild);
    for (const channel of guild.channels) this.addChannel(guild.id, channel);
  }

  /** A channel (or thread) of a guild; a thread's `parent_id` must be a channel of the guild. */
  addChannel(guildId: Snowflake, channel: FakeChannelConfig): ChannelState {
    const type = channel.type ?? ChannelTypes.GuildText;
    if (isThreadType(type) && this.channels.get(channel.parent_id ?? "")?.guild_id !== guildId) {
      throw new Error(`fake Discord: thread ${channel.id} needs a parent_id among guild ${guildId}'s channels`);
    }
    const state: ChannelState = {
      id: channel.id,
      type,
      guild_id: guildId,
      name: channel.name,
      topic: channel.topic ?? null,
      position: channel.position ?? 0,
      parent_id: channel.parent_id ?? null,
      last_message_id: null,
    };
    this.channels.set(channel.id, state);
    return state;
  }

  memberIds(guildId: Snowflake): Snowflake[] {
    const guild = this.guilds.get(guildId);
    if (!guild) return [];
    const ids = guild.members ?? [...this.users.keys()];
    return ids.includes(this.botUser.id) ? ids : [this.botUser.id, ...ids];
  }

  /** The guild member object of a user, with or without its `user`; null when not a member. */
  member(guildId: Snowflake, userId: Snowflake, withUser: boolean): Json | null {
    if (!this.memberIds(guildId).includes(userId)) return null;
    const user = this.users.get(userId);
    if (!user) return null;
    return memberPayload(withUser ? user : null, this.joinedAt);
  }

  /** The DM channel with a user, created on first use (resources/user#create-dm returns the same channel each time). */
  dmChannel(recipientId: Snowflake): ChannelState {
    for (const channel of this.channels.values()) {
      if (channel.type === ChannelTypes.DM && channel.recipient_id === recipientId) return channel;
    }
    const channel: ChannelState = { id: this.nextId(), type: ChannelTypes.DM, recipient_id: recipientId, last_message_id: null };
    this.channels.set(channel.id, channel);
    return channel;
  }

  userPayload(userOrId: Snowflake | FakeUser): Json {
    if (typeof userOrId !== "string") {
      if (!this.users.has(userOrId.id)) this.users.set(userOrId.id, userOrId);
      return userPayload(userOrId);
    }
    const user = this.users.get(userOrId);
    if (!user) throw new Error(`fake Discord: unknown user ${userOrId}`);
    return userPayload(user);
  }

  message(id: Snowflake): StoredMessage | undefined {
    return this.messageById.get(id);
  }

  allMessages(channelId?: Snowflake): StoredMessage[] {
    return this.messageList.filter((m) => channelId === undefined || m.payload.channel_id === channelId);
  }

  /** The message this author created in this channel with this nonce within the window, if any. */
  findByNonce(channelId: Snowflake, authorId: Snowflake, nonce: string | number, windowMs: number): StoredMessage | undefined {
    if (windowMs <= 0) return undefined;
    const since = Date.now() - windowMs;
    return this.messageList.find(
      (m) =>
        m.payload.channel_id === channelId &&
        m.payload.author["id"] === authorId &&
        m.payload["nonce"] !== undefined &&
        String(m.payload["nonce"]) === String(nonce) &&
        m.createdAtMs >= since,
    );
  }

  createMessage(input: CreateMessageInput): StoredMessage {
    const referenced = this.resolveReference(input);
    const mentions = this.resolveMentions(input, referenced);
    const payload: MessagePayload = {
      id: input.id ?? this.nextId(),
      channel_id: input.channel.id,
      author: input.author,
      content: input.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: input.tts ?? false,
      mention_everyone: mentions.everyone,
      mentions: mentions.users,
      mention_roles: mentions.roles,
      attachments: input.attachments ?? [],
      embeds: input.embeds ?? [],
      pinned: false,
      type: referenced ? MessageTypes.Reply : MessageTypes.Default,
      flags: 0,
      components: [],
    };
    if (input.nonce !== undefined) payload["nonce"] = input.nonce;
    if (input.webhookId) payload["webhook_id"] = input.webhookId;
    if (referenced) {
      const ref = referenced.payload;
      const channel = this.channels.get(ref.channel_id);
      payload["message_reference"] = {
        type: 0,
        message_id: ref.id,
        channel_id: ref.channel_id,
        ...(channel?.guild_id ? { guild_id: channel.guild_id } : {}),
      };
      payload["referenced_message"] = { ...ref };
    }
    const stored: StoredMessage = { payload, history: [], deleted: false, allowedMentions: input.allowedMentions, createdAtMs: Date.now() };
    this.messageList.push(stored);
    this.messageById.set(payload.id, stored);
    input.channel.last_message_id = payload.id;
    return stored;
  }

  editMessage(stored: StoredMessage, changes: { content?: string; embeds?: Json[]; allowedMentions?: AllowedMentions }): void {
    const now = new Date().toISOString();
    if (changes.content !== undefined && changes.content !== stored.payload.content) {
      stored.history.push({ content: stored.payload.content, replacedAt: now });
      stored.payload.content = changes.content;
      const channel = this.channels.get(stored.payload.channel_id);
      if (channel) {
        const mentions = this.resolveMentions({ channel, author: stored.payload.author, content: changes.content, allowedMentions: changes.allowedMentions }, undefined);
        stored.payload.mentions = mentions.users;
        stored.payload.mention_roles = mentions.roles;
        stored.payload.mention_everyone = mentions.everyone;
      }
    }
    if (changes.embeds !== undefined) stored.payload.embeds = changes.embeds;
    stored.payload.edited_timestamp = now;
  }

  private resolveReference(input: CreateMessageInput): StoredMessage | undefined {
    const reference = input.reference;
    if (!reference) return undefined;
    const found = this.messageById.get(reference.message_id);
    const channelId = reference.channel_id ?? input.channel.id;
    if (found && !found.deleted && found.payload.channel_id === channelId) return found;
    if (reference.fail_if_not_exists === false) return undefined;
    throw new UnknownReferenceError(reference.message_id);
  }

  private resolveMentions(
    input: Pick<CreateMessageInput, "channel" | "author" | "content" | "mentions" | "allowedMentions">,
    referenced: StoredMessage | undefined,
  ): { users: Json[]; roles: Snowflake[]; everyone: boolean } {
    const allowed = input.allowedMentions;
    const parse = allowed?.parse;
    const userAllowed = (id: string) => !allowed || (parse?.includes("users") ?? false) || (allowed.users?.includes(id) ?? false);
    const roleAllowed = (id: string) => !allowed || (parse?.includes("roles") ?? false) || (allowed.roles?.includes(id) ?? false);
    const ids = new Set<string>();
    for (const match of input.content.matchAll(MENTION_USER)) if (userAllowed(match[1])) ids.add(match[1]);
    for (const id of input.mentions ?? []) ids.add(id);
    if (referenced && (!allowed || allowed.replied_user === true)) ids.add(String(referenced.payload.author["id"]));
    const users = [...ids].filter((id) => this.users.has(id)).map((id) => this.userPayload(id));
    const roles = [...input.content.matchAll(MENTION_ROLE)].map((m) => m[1]).filter(roleAllowed);
    const everyone = /@(everyone|here)/.test(input.content) && (!allowed || (parse?.includes("everyone") ?? false));
    return { users, roles, everyone };
  }
}
