/**
 * The channel webhooks a daimon speaks through when `daimonWebhooks` is on, so its words show
 * under its own name instead of the bot's. One webhook per channel, owned by this bot (found
 * among the channel's webhooks, else created once); a thread uses its parent channel's webhook
 * with `thread_id`, as Discord requires.
 *
 * Webhook executions take no nonce: a webhook post whose answer was lost is found on Discord
 * by its author and text before it is made again (findLostPost.ts), as a bot's post is.
 */
import type { Client, GuildChannelManager, Webhook, WebhookType } from "discord.js";

/** Webhook names may not contain "discord" or "clyde" (Discord refuses them). */
const WEBHOOK_NAME = "ensoul daimons";

export interface WebhookTarget {
  webhook: Webhook<WebhookType.Incoming>;
  /** The channel the webhook belongs to (a thread's parent). */
  channelId: string;
  threadId?: string;
}

export class DaimonWebhooks {
  /** By parent channel id: the lookup in flight or done, shared by concurrent posts. */
  readonly #byChannel = new Map<string, Promise<Webhook<WebhookType.Incoming>>>();
  readonly #ids = new Set<string>();

  constructor(private readonly client: Client) {}

  /** One of this bridge's webhooks: its echo on the gateway is the bridge's own message. */
  owns(webhookId: string): boolean {
    return this.#ids.has(webhookId);
  }

  /** The webhook to post into `channelId` (a thread: its parent's), or undefined where Discord has none (DMs). */
  async target(channelId: string): Promise<WebhookTarget | undefined> {
    const channel = this.client.channels.cache.get(channelId) ?? (await this.client.channels.fetch(channelId));
    if (!channel || channel.isDMBased() || !("guild" in channel)) return undefined;
    const threadId = channel.isThread() ? channel.id : undefined;
    const parentId = channel.isThread() ? channel.parentId : channel.id;
    if (!parentId) return undefined;
    let webhook = this.#byChannel.get(parentId);
    if (!webhook) {
      webhook = this.#find(channel.guild.channels, parentId);
      this.#byChannel.set(parentId, webhook);
      // A failed lookup (no permission yet) is tried again on the next post.
      webhook.catch(() => this.#byChannel.delete(parentId));
    }
    return { webhook: await webhook, channelId: parentId, ...(threadId !== undefined ? { threadId } : {}) };
  }

  /** Forgets a channel's webhook (deleted on Discord): the next post looks again. */
  forget(channelId: string): void {
    this.#byChannel.delete(channelId);
  }

  async #find(channels: GuildChannelManager, parentId: string): Promise<Webhook<WebhookType.Incoming>> {
    const botId = this.client.user?.id;
    for (const webhook of (await channels.fetchWebhooks(parentId)).values()) {
      if (webhook.isIncoming() && webhook.token && webhook.owner?.id === botId) {
        this.#ids.add(webhook.id);
        return webhook;
      }
    }
    const created = await channels.createWebhook({ channel: parentId, name: WEBHOOK_NAME });
    this.#ids.add(created.id);
    return created;
  }
}
