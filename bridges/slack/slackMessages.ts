/**
 * A Slack event (`app_mention`, or a `message` in a channel, a thread or a DM) as the
 * PlatformMessage the core takes. Its perception id is Slack's identity of the message (team,
 * channel, ts): an `app_mention` and the `message` event for the same text, a retry, or a
 * redelivery after a reconnect all give the same id, which the core's ledger takes once.
 *
 * Edits, deletions, joins and other housekeeping subtypes are not things said: they give none.
 */
import { platformPerceptionId, type PlatformMessage } from "../core/index.ts";
import type { SlackIdentity } from "./slackIdentity.ts";

/** Message subtypes that are someone saying something. */
const SAID = new Set([undefined, "bot_message", "thread_broadcast", "file_share", "me_message"]);

type Field = string | undefined;

function field(event: Record<string, unknown>, key: string): Field {
  const value = event[key];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Slack escapes these three in message text; the soul reads what the person typed. */
export function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** `<@U123>` or `<@U123|name>`, with one space before it (so "hey <@U123> there" reads "hey there"). */
function mentionPattern(botUserId: string, flags: string): RegExp {
  return new RegExp(` ?<@${botUserId.replace(/[^A-Za-z0-9]/g, "")}(?:\\|[^>]*)?>`, flags);
}

/** The event as a PlatformMessage, or undefined when it is nothing said. `userName` is the user id until looked up. */
export function slackMessageOf(event: Record<string, unknown>, me: SlackIdentity): PlatformMessage | undefined {
  const type = field(event, "type");
  if (type !== "app_mention" && type !== "message") return undefined;
  const subtype = field(event, "subtype");
  if (!SAID.has(subtype)) return undefined;
  const channel = field(event, "channel");
  const ts = field(event, "ts");
  if (!channel || !ts) return undefined;
  const user = field(event, "user");
  const botId = field(event, "bot_id");
  const raw = typeof event["text"] === "string" ? event["text"] : "";
  const mentioned = type === "app_mention" || mentionPattern(me.botUserId, "").test(raw);
  const threadTs = field(event, "thread_ts");
  const fromBot = botId !== undefined || subtype === "bot_message";
  return {
    platform: "slack",
    // The workspace the bot is in, not the event's `team` (a user's home team in a shared channel).
    id: platformPerceptionId("slack", me.teamId, channel, ts),
    channel,
    messageId: ts,
    direct: field(event, "channel_type") === "im",
    ...(threadTs !== undefined && threadTs !== ts ? { thread: threadTs } : {}),
    userId: user ?? botId ?? "unknown",
    userName: fromBot ? (field(event, "username") ?? user ?? botId ?? "a bot") : (user ?? "unknown"),
    text: unescapeSlack(raw.replace(mentionPattern(me.botUserId, "g"), "").trim()),
    mentioned,
    fromBot,
    own: (user !== undefined && user === me.botUserId) || (botId !== undefined && botId === me.botId),
  };
}
