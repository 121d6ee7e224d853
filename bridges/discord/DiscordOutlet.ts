/**
 * What the core's EditingSink does with speech, done on Discord: post a reply (with a message
 * reference to what it answers), edit it while the soul streams, show typing while it thinks.
 *
 * Each part is posted once. The core ledger records a post's text before it is made and its
 * message after; a post whose answer was lost (a 5xx or a reset after Discord made it, a stop
 * that cut it off, a crash) is recorded without its message, and before it is made again the
 * outlet looks for it on Discord (`find`, findLostPost.ts), as long after as the ledger keeps
 * it. Posts go through PostingRest, which never sends one again on its own; a bot's post also
 * carries a nonce derived from its speech id, its part and the message it answers, with
 * `enforce_nonce`, so a repeat within Discord's nonce window is the same message anyway.
 *
 * A daimon's words are the bot's with a bold `**Name:** ` prefix, or, with `daimonWebhooks`, a
 * channel webhook's under the daimon's own name. The reference the ledger keeps says which, so
 * an edit after a restart is made the same way. Rate limits need nothing here: the REST
 * clients wait out a 429 and send again, and the core posts each channel's replies in their
 * own lane, so the wait holds only that channel.
 */
import { DiscordAPIError, escapeMarkdown, type APIMessage, type Client, type SendableChannels } from "discord.js";
import type { BridgeLedger, Conversation, PlatformOutlet, PostedRef, PostKey, Speaker } from "../core/index.ts";
import type { ClientGate } from "./ClientGate.ts";
import type { DaimonWebhooks } from "./DaimonWebhooks.ts";
import { discordNonce } from "./discordNonce.ts";
import type { DiscordRef } from "./DiscordRef.ts";
import { findLostPost, type PostAuthors } from "./findLostPost.ts";
import type { PostingRest } from "./PostingRest.ts";
import type { TypingIndicator } from "./TypingIndicator.ts";

/** Characters per Discord message. */
export const DISCORD_LIMIT = 2000;
/** Discord allows about five edits per message every five seconds. */
export const DISCORD_EDIT_INTERVAL_MS = 1200;
/** A daimon's name in its prefix, at most (escaped, it may double). */
const DAIMON_NAME_MAX = 32;
/** What a daimon's pieces leave free for the longest prefix: `**` + name + `:** `. */
export const DAIMON_LIMIT = DISCORD_LIMIT - (2 * DAIMON_NAME_MAX + 6);

/** Nobody is pinged by what a soul says (a user's `@everyone` echoed back), except the one it replies to. */
const NO_PINGS = { parse: [], repliedUser: true } as const;

export interface DiscordOutletDeps {
  client: Client;
  /** Makes the posts, with no retry of its own. */
  posting: PostingRest;
  gate: ClientGate;
  typing: TypingIndicator;
  /** The bridge's record of its posts: the text of a post whose answer was lost. */
  ledger: BridgeLedger;
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
    return this.deps.gate.run(async (signal) => {
      const daimon = key.speaker.kind === "daimon" ? key.speaker.name : undefined;
      if (daimon !== undefined && this.deps.webhooks && !/clyde|discord/i.test(daimon)) {
        const viaWebhook = await this.#postByWebhook(conversation.channel, text, daimon, signal);
        if (viaWebhook) return viaWebhook;
      }
      // No webhook here (a DM, no Manage Webhooks permission, a name Discord refuses): the bot says it, prefixed.
      return this.#postAsBot(conversation, text, key, daimon, signal);
    });
  }

  /** The message a post recorded without one made, if it made one: looked for on Discord (findLostPost.ts). */
  find(conversation: Conversation, key: PostKey): Promise<DiscordRef | undefined> {
    const text = this.deps.ledger.post(key.speechId, key.part)?.shown;
    if (text === undefined) return Promise.resolve(undefined);
    const daimon = key.speaker.kind === "daimon" ? key.speaker.name : undefined;
    const lost = { conversation, botContent: this.#content(text, daimon), ...(daimon !== undefined ? { daimon: { name: daimon, text } } : {}) };
    return this.deps.gate.run((signal) => findLostPost(this.deps.client, this.deps.ledger, this.#authors(), lost, signal));
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
      await this.#editAsBot(r.channel, r.id, this.#content(text, r.daimon));
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

  #authors(): PostAuthors {
    const { client, webhooks } = this.deps;
    return { botId: client.user?.id ?? "", applicationId: client.application?.id, ownsWebhook: (id) => webhooks?.owns(id) ?? false };
  }

  async #postAsBot(conversation: Conversation, text: string, key: PostKey, daimon: string | undefined, signal: AbortSignal): Promise<DiscordRef> {
    const content = this.#content(text, daimon);
    const message: APIMessage = await this.deps.posting.createMessage(
      conversation.channel,
      {
        content,
        nonce: discordNonce(key.speechId, key.part, conversation.messageId),
        enforce_nonce: true,
        allowed_mentions: { parse: [], replied_user: true },
        // The first piece answers the message; the pieces after it continue that answer.
        ...(key.part === 0 ? { message_reference: { message_id: conversation.messageId, fail_if_not_exists: false } } : {}),
      },
      signal,
    );
    // The nonce found the post made before a crash, from text since grown (a streamed draft).
    if (message.content.trim() !== content.trim()) await this.#editAsBot(message.channel_id, message.id, content);
    return { channel: message.channel_id, id: message.id, ...(daimon !== undefined ? { daimon } : {}) };
  }

  async #editAsBot(channelId: string, messageId: string, content: string): Promise<void> {
    const channel = await sendableChannel(this.deps.client, channelId);
    await channel.messages.edit(messageId, { content, allowedMentions: NO_PINGS });
  }

  /** Undefined where no webhook can post: the caller posts as the bot instead. */
  async #postByWebhook(channelId: string, text: string, name: string, signal: AbortSignal): Promise<DiscordRef | undefined> {
    try {
      const target = await this.deps.webhooks?.target(channelId);
      if (!target) return undefined;
      try {
        const body = { content: text, username: name.slice(0, 80), allowed_mentions: { parse: [] } };
        const message = await this.deps.posting.executeWebhook(target.webhook, body, target.threadId, signal);
        return { channel: message.channel_id, id: message.id, webhook: true };
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
}

/** A channel the bot can post in: from the cache, else fetched (a DM or thread after a restart). */
export async function sendableChannel(client: Client, id: string): Promise<SendableChannels> {
  const channel = client.channels.cache.get(id) ?? (await client.channels.fetch(id));
  if (!channel?.isSendable()) throw new Error(`Discord channel ${id} cannot take messages`);
  return channel;
}
