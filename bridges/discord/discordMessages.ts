/**
 * A discord.js Message as the core's PlatformMessage: who said what where (in a thread: the
 * thread, and the channel it is in), with the bot's mention stripped, so the policy (core
 * `decide`) and the perception see the same thing for every platform.
 *
 * Discord's own identity of a message is its snowflake id, so the perception id is that id:
 * a MESSAGE_CREATE the gateway replays after a RESUME (or a node restart) is the same
 * perception, which the ledger drops. discord.js only hides replays of messages it still has
 * cached, and the bridge keeps no message cache, so it never relies on that.
 */
import { ChannelType, type Client, type Message } from "discord.js";
import { platformPerceptionId, type PlatformMessage } from "../core/index.ts";

/** Who the bridge is on Discord: its bot user, and the application that owns its webhooks. */
export interface DiscordSelf {
  botId: string;
  applicationId?: string | undefined;
  /** Webhooks this bridge posts daimons' words through (their echoes are its own messages). */
  ownsWebhook(webhookId: string): boolean;
}

/** `<@id>` and the older nickname form `<@!id>`. */
export function stripMention(content: string, botId: string): string {
  return content
    .replace(new RegExp(`<@!?${botId}>`, "g"), " ")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** Attachments travel as text lines: the soul can mention them, a model cannot open them anyway. */
function withAttachments(text: string, message: Message): string {
  const lines = [...message.attachments.values()].map((a) => `[attachment: ${a.name} ${a.url}]`);
  return [text, ...lines].filter((line) => line.length > 0).join("\n");
}

function isOwn(message: Message, self: DiscordSelf): boolean {
  if (message.author.id === self.botId) return true;
  if (message.webhookId === null) return false;
  return self.ownsWebhook(message.webhookId) || (self.applicationId !== undefined && message.applicationId === self.applicationId);
}

/** The message for the core, or undefined for what is no one's words (joins, pins, thread starts). */
export function platformMessageOf(message: Message, self: DiscordSelf): PlatformMessage | undefined {
  if (message.system) return undefined;
  const channel = message.channel as Message["channel"] | null;
  const direct = message.guildId === null || channel?.type === ChannelType.DM;
  const thread = channel?.isThread() ? message.channelId : undefined;
  // A thread is a channel of its own: the policy's channel lists also see the channel it is in.
  const parentChannel = channel?.isThread() ? (channel.parentId ?? undefined) : undefined;
  const userName = message.member?.displayName ?? message.author.globalName ?? message.author.username;
  return {
    platform: "discord",
    id: platformPerceptionId("discord", message.id),
    channel: message.channelId,
    messageId: message.id,
    direct,
    ...(thread !== undefined ? { thread } : {}),
    ...(parentChannel !== undefined ? { parentChannel } : {}),
    userId: message.author.id,
    userName,
    text: withAttachments(stripMention(message.content, self.botId), message),
    mentioned: message.mentions.users.has(self.botId),
    fromBot: message.author.bot || message.webhookId !== null,
    own: isOwn(message, self),
  };
}

/**
 * Makes sure a message in a thread knows the thread's channel. discord.js learns a thread from
 * GUILD_CREATE or THREAD_CREATE; one it first hears of from a message in it is a partial
 * channel without its parent, which Discord is asked for, so the policy never decides on a
 * thread without its channel. A lookup Discord refuses rejects: the message is not taken.
 */
export async function withThreadParent(client: Client, message: Message): Promise<void> {
  const channel = message.channel as Message["channel"] | null;
  if (!channel?.isThread() || channel.parentId) return;
  const fetched = await client.channels.fetch(message.channelId, { force: true });
  if (!fetched?.isThread() || !fetched.parentId) throw new Error(`Discord did not say which channel thread ${message.channelId} is in`);
}
