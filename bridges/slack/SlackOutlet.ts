/**
 * What the soul's speech does on Slack, for the core's EditingSink: replies go in the thread of
 * the message they answer (so a follow-up there is answered without a new mention), streamed
 * pieces edit the reply (chat.update), and each post carries its speech id and part in the
 * message metadata, which is how a post made just before a crash is found again instead of
 * being made twice. While the soul thinks, its hourglass is on the person's message.
 *
 * A daimon speaks under its own name and icon (chat:write.customize). Text is escaped, so
 * nothing a soul says becomes a Slack control sequence (`<!channel>`, a forged mention).
 */
import type { Conversation, PlatformOutlet, PostedRef, PostKey } from "../core/index.ts";
import { slackCall, slackErrorCode, type SlackClient } from "./slackApi.ts";
import type { SlackIdentity } from "./slackIdentity.ts";

export const SPEECH_EVENT_TYPE = "ensoul_speech";
export const THINKING_REACTION = "hourglass_flowing_sand";

/** Slack renders about 4,000 characters well (it takes 40,000). */
const LIMIT = 4000;
/** chat.update is Tier 3 (about 50 a minute): one edit a second per reply stays well inside. */
const EDIT_INTERVAL_MS = 1000;
/** Pages of a thread read when looking for a lost post. */
const FIND_PAGES = 10;

export interface SlackOutletOptions {
  /** The emoji a daimon posts under. */
  daimonIcon: string;
}

/** Escapes Slack's three control characters (docs: "formatting text for app surfaces"). */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

interface FoundMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

export class SlackOutlet implements PlatformOutlet {
  readonly limit = LIMIT;
  readonly editIntervalMs = EDIT_INTERVAL_MS;

  constructor(
    private readonly client: SlackClient,
    private readonly me: SlackIdentity,
    private readonly options: SlackOutletOptions,
  ) {}

  replyThread(conversation: Conversation): string {
    return conversation.thread ?? conversation.messageId;
  }

  async post(conversation: Conversation, text: string, key: PostKey): Promise<PostedRef> {
    const voice = key.speaker.kind === "daimon" ? { username: key.speaker.name.slice(0, 80), icon_emoji: this.options.daimonIcon } : {};
    const result = await slackCall("chat.postMessage", () =>
      this.client.chat.postMessage({
        channel: conversation.channel,
        thread_ts: this.replyThread(conversation),
        text: escapeSlack(text),
        metadata: { event_type: SPEECH_EVENT_TYPE, event_payload: { speech_id: key.speechId, part: key.part } },
        ...voice,
      }),
    );
    if (!result.ts) throw new Error("chat.postMessage answered without the message's ts");
    return { channel: result.channel ?? conversation.channel, id: result.ts };
  }

  async edit(ref: PostedRef, text: string): Promise<void> {
    await slackCall("chat.update", () => this.client.chat.update({ channel: ref.channel, ts: ref.id, text: escapeSlack(text) }));
  }

  /** The post carrying this speech id and part in the reply thread, if one was made. */
  async find(conversation: Conversation, key: PostKey): Promise<PostedRef | undefined> {
    let cursor: string | undefined;
    for (let page = 0; page < FIND_PAGES; page++) {
      let result: Awaited<ReturnType<SlackClient["conversations"]["replies"]>>;
      try {
        result = await slackCall("conversations.replies", () =>
          this.client.conversations.replies({ channel: conversation.channel, ts: this.replyThread(conversation), include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) }),
        );
      } catch (err) {
        // No thread, so no post in it: the post is made now.
        if (slackErrorCode(err) === "thread_not_found") return undefined;
        throw err;
      }
      const hit = (result.messages as FoundMessage[] | undefined)?.find((m) => this.#isPost(m, key));
      if (hit?.ts) return { channel: conversation.channel, id: hit.ts };
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!result.has_more || !cursor) return undefined;
    }
    return undefined;
  }

  async thinking(conversation: Conversation, on: boolean): Promise<void> {
    const target = { channel: conversation.channel, timestamp: conversation.messageId, name: THINKING_REACTION };
    try {
      if (on) await slackCall("reactions.add", () => this.client.reactions.add(target));
      else await slackCall("reactions.remove", () => this.client.reactions.remove(target));
    } catch (err) {
      // Already there, already gone, or the message was deleted: the hourglass is where it should be.
      const code = slackErrorCode(err);
      if (code === "already_reacted" || code === "no_reaction" || code === "message_not_found") return;
      throw err;
    }
  }

  #isPost(m: FoundMessage, key: PostKey): boolean {
    const mine = (m.bot_id !== undefined && m.bot_id === this.me.botId) || m.user === this.me.botUserId;
    const payload = m.metadata?.event_payload;
    return mine && m.metadata?.event_type === SPEECH_EVENT_TYPE && payload?.["speech_id"] === key.speechId && Number(payload?.["part"]) === key.part;
  }
}
