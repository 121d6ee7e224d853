/**
 * What the core's EditingSink does with speech, done on Discord: post a reply (with a message
 * reference to what it answers), edit it while the soul streams, show typing while it thinks.
 *
 * Each post carries a nonce derived from its speech id, its part and the message it answers,
 * with `enforce_nonce`, so the core ledger's "intent recorded, reference not yet" after a crash
 * ends in the same message, not a second one. A daimon's words are the bot's with a bold `**Name:** ` prefix, or, with
 * `daimonWebhooks`, a channel webhook's under the daimon's own name. The reference the ledger
 * keeps says which, so an edit after a restart is made the same way.
 *
 * Rate limits need nothing here: discord.js's REST client waits out a 429 and sends again, and
 * the core posts each channel's replies in their own lane, so the wait holds only that channel.
 */
import { DiscordAPIError, escapeMarkdown, type Client, type MessageCreateOptions, type SendableChannels } from "discord.js";
import type { Conversation, PlatformOutlet, PostedRef, PostKey, Speaker } from "../core/index.ts";
import type { ClientGate } from "./ClientGate.ts";
import type { DaimonWebhooks } from "./DaimonWebhooks.ts";
import { discordNonce } from "./discordNonce.ts";
import type { TypingIndicator } from "./TypingIndicator.ts";

/** Characters per Discord message. */
export const DISCORD_LIMIT = 2000;
/** Discord allows about five edits per message every five seconds. */
export const DISCORD_EDIT_INTERVAL_MS = 1200;
/** A daimon's name in its prefix, at most (escaped, it may double). */
const DAIMON_NAME_MAX = 32;
/** What a daimon's pieces leave free for the longest prefix: `**` + name + `:** `. */
export const DAIMON_LIMIT = DISCORD_LIMIT - (2 * DAIMON_NAME_MAX + 6);

/** The ledger keeps the whole reference: how the message was made decides how it is edited. */
export interface DiscordRef extends PostedRef {
  /** Posted by the bot for this daimon, with its prefix. */
  daimon?: string;
  /** Posted through this bridge's channel webhook. */
  webhook?: boolean;
}

/** Nobody is pinged by what a soul says (a user's `@everyone` echoed back), except the one it replies to. */
const NO_PINGS = { parse: [], repliedUser: true } as const;

export interface DiscordOutletDeps {
  client: Client;
  gate: ClientGate;
  typing: TypingIndicator;
  /** Set when `daimonWebhooks` is on. */
  webhooks?: DaimonWebhooks;
  report(err: unknown, what: string): void;
}

/** Discord's "Unknown Webhook": someone deleted it. */
const UNKNOWN_WEBHOOK = 10015;

export function daimonPrefix(name: string): string {
  return `**${escapeMarkdown(name.slice(0, DAIMON_NAME_MAX))}:** `;
}

export class DiscordOutlet implements PlatformOutlet {
  readonly editIntervalMs = DISCORD_EDIT_INTERVAL_MS;
  readonly limit = DISCORD_LIMIT;

  constructor(private readonly deps: DiscordOutletDeps) {}

  /** A daimon's words carry a `**Name:** ` prefix: they are split shorter, leaving it room. */
  limitFor(speaker: Speaker): number {
    return speaker.kind === "soul" ? DISCORD_LIMIT : DAIMON_LIMIT;
  }

  post(conversation: Conversation, text: string, key: PostKey): Promise<DiscordRef> {
    return this.deps.gate.run(async () => {
      const daimon = key.speaker.kind === "daimon" ? key.speaker.name : undefined;
      if (daimon !== undefined && this.deps.webhooks && !/clyde|discord/i.test(daimon)) {
        const viaWebhook = await this.#postByWebhook(conversation.channel, text, daimon);
        if (viaWebhook) return viaWebhook;
      }
      // No webhook here (a DM, no Manage Webhooks permission, a name Discord refuses): the bot says it, prefixed.
      return this.#postAsBot(conversation, text, key, daimon);
    });
  }

  edit(ref: PostedRef, text: string): Promise<void> {
    const r = ref as DiscordRef;
    return this.deps.gate.run(async () => {
      if (r.webhook) {
        const target = await this.deps.webhooks?.target(r.channel);
        if (!target) throw new Error(`no webhook to edit message ${r.id} in ${r.channel} (daimonWebhooks was turned off?)`);
        await target.webhook.editMessage(r.id, { content: text, allowedMentions: { parse: [] }, ...(target.threadId ? { threadId: target.threadId } : {}) });
        return;
      }
      const channel = await this.#channel(r.channel);
      await channel.messages.edit(r.id, { content: this.#content(text, r.daimon), allowedMentions: NO_PINGS });
    });
  }

  thinking(conversation: Conversation, on: boolean): Promise<void> {
    if (!on) {
      this.deps.typing.stop(conversation.channel);
      return Promise.resolve();
    }
    return this.deps.typing.start(conversation.channel);
  }

  /** Replies land where the message was: in its thread, if it was in one. */
  replyThread(conversation: Conversation): string | undefined {
    return conversation.thread;
  }

  #content(text: string, daimon: string | undefined): string {
    return daimon === undefined ? text : `${daimonPrefix(daimon)}${text}`;
  }

  async #postAsBot(conversation: Conversation, text: string, key: PostKey, daimon: string | undefined): Promise<DiscordRef> {
    const channel = await this.#channel(conversation.channel);
    const content = this.#content(text, daimon);
    const options: MessageCreateOptions = {
      content,
      nonce: discordNonce(key.speechId, key.part, conversation.messageId),
      enforceNonce: true,
      allowedMentions: NO_PINGS,
      // The first piece answers the message; the pieces after it continue that answer.
      ...(key.part === 0 ? { reply: { messageReference: conversation.messageId, failIfNotExists: false } } : {}),
    };
    const message = await channel.send(options);
    // The nonce found the post made before a crash, from text since grown (a streamed draft).
    if (message.content.trim() !== content.trim()) await message.edit({ content, allowedMentions: NO_PINGS });
    return { channel: message.channelId, id: message.id, ...(daimon !== undefined ? { daimon } : {}) };
  }

  /** Undefined where no webhook can post: the caller posts as the bot instead. */
  async #postByWebhook(channelId: string, text: string, name: string): Promise<DiscordRef | undefined> {
    try {
      const target = await this.deps.webhooks?.target(channelId);
      if (!target) return undefined;
      try {
        const message = await target.webhook.send({ content: text, username: name.slice(0, 80), allowedMentions: { parse: [] }, ...(target.threadId ? { threadId: target.threadId } : {}) });
        return { channel: message.channelId, id: message.id, webhook: true };
      } catch (err) {
        if (err instanceof DiscordAPIError && err.code === UNKNOWN_WEBHOOK) this.deps.webhooks?.forget(target.channelId);
        throw err;
      }
    } catch (err) {
      // Refused (403, a deleted webhook, a bad name) is for good this time; a 5xx or a network error is tried again.
      if (!(err instanceof DiscordAPIError) || err.status >= 500) throw err;
      this.deps.report(err, `posting ${name}'s words through a webhook in ${channelId} (the bot posted them instead)`);
      return undefined;
    }
  }

  #channel(id: string): Promise<SendableChannels> {
    return sendableChannel(this.deps.client, id);
  }
}

/** A channel the bot can post in: from the cache, else fetched (a DM or thread after a restart). */
export async function sendableChannel(client: Client, id: string): Promise<SendableChannels> {
  const channel = client.channels.cache.get(id) ?? (await client.channels.fetch(id));
  if (!channel?.isSendable()) throw new Error(`Discord channel ${id} cannot take messages`);
  return channel;
}
