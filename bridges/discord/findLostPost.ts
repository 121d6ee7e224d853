/**
 * The message a post whose answer was lost may have made. After a post whose answer never
 * came (a 5xx or a reset connection after Discord made the message, a post cut off by a stop,
 * a crash), the ledger holds the post's text without its message. Discord keeps nothing on a
 * message to know it by later (a nonce is forgotten after minutes; a webhook post takes none),
 * so the bridge looks where the post would be: in the conversation's channel or thread, after
 * the message it answers, written by this bot (or by this bridge's webhook under the daimon's
 * name), with the text the ledger recorded, replying to that message if it replies at all, and
 * not a message the ledger already holds for another post. The oldest such message is the post.
 *
 * It reads at most FIND_PAGES pages of 100 messages after the message answered: a post more
 * than 1,000 messages further on is not found, and is made again. So is one someone deleted.
 */
import { makeURLSearchParams, Routes, type APIMessage, type Client } from "discord.js";
import type { BridgeLedger, Conversation } from "../core/index.ts";
import type { DiscordRef } from "./DiscordRef.ts";

/** Pages of messages read after the message answered. */
export const FIND_PAGES = 10;
const PAGE = 100;

/** Who may have written the post, and what it would say. */
export interface LostPost {
  conversation: Conversation;
  /** The text the ledger recorded, as the bot posts it (a daimon's with its prefix). */
  botContent: string;
  /** A daimon's words: its name (a webhook post's author) and its text as the webhook posts it. */
  daimon?: { name: string; text: string };
}

export interface PostAuthors {
  botId: string;
  applicationId: string | undefined;
  ownsWebhook(webhookId: string): boolean;
}

export async function findLostPost(client: Client, ledger: BridgeLedger, authors: PostAuthors, lost: LostPost, signal: AbortSignal): Promise<DiscordRef | undefined> {
  const channel = lost.conversation.channel;
  let after = lost.conversation.messageId;
  for (let page = 0; page < FIND_PAGES; page++) {
    const batch = (await client.rest.get(Routes.channelMessages(channel), { query: makeURLSearchParams({ after, limit: PAGE }), signal })) as APIMessage[];
    const oldestFirst = [...batch].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    for (const message of oldestFirst) {
      const found = postOf(message, authors, lost);
      if (found && !ledger.recordsMessage(found)) return found;
    }
    if (batch.length < PAGE) return undefined;
    after = oldestFirst.at(-1)!.id;
  }
  return undefined;
}

/** The message as the lost post, if it is one by its author and text. */
function postOf(message: APIMessage, authors: PostAuthors, lost: LostPost): DiscordRef | undefined {
  const reference = message.message_reference?.message_id;
  if (reference !== undefined && reference !== lost.conversation.messageId) return undefined;
  const ref = { channel: message.channel_id, id: message.id };
  const content = message.content.trim();
  if (message.webhook_id === undefined || message.webhook_id === null) {
    if (message.author.id !== authors.botId || content !== lost.botContent.trim()) return undefined;
    return lost.daimon ? { ...ref, daimon: lost.daimon.name } : ref;
  }
  const ours = authors.ownsWebhook(message.webhook_id) || (authors.applicationId !== undefined && message.application_id === authors.applicationId);
  if (!lost.daimon || !ours || message.author.username !== lost.daimon.name.slice(0, 80) || content !== lost.daimon.text.trim()) return undefined;
  return { ...ref, webhook: true };
}
