/**
 * The Web API methods the fake implements, each answering with the body Slack sends:
 * `{ ok: true, ... }` or `{ ok: false, error }` with Slack's own error codes. Shapes from the
 * method reference (docs.slack.dev/reference/methods/chat.postMessage, chat.update,
 * chat.delete, reactions.add, reactions.remove, conversations.replies, conversations.history,
 * users.info, auth.test, apps.connections.open) and @slack/web-api's response types
 * (node_modules/@slack/web-api/dist/types/response/*.d.ts).
 */
import type { MessageMetadata, SlackState, StoredMessage } from "./state.ts";
import { compareTs } from "./state.ts";

export type ApiResult = { ok: true; [key: string]: unknown } | { ok: false; error: string; [key: string]: unknown };
export type Args = Record<string, unknown>;

/** What a method may need beyond the state: minting a Socket Mode URL. */
export interface MethodContext {
  state: SlackState;
  openSocketUrl(): string;
}

type Method = (args: Args, ctx: MethodContext) => ApiResult;

const fail = (error: string): ApiResult => ({ ok: false, error });

export function str(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return undefined;
}

/** Slack's booleans arrive as `true`, `"true"` or `"1"` (form encoding). */
export function bool(value: unknown): boolean {
  return value === true || value === "true" || value === "1" || value === 1;
}

function metadataOf(value: unknown): MessageMetadata | undefined {
  if (!value || typeof value !== "object") return undefined;
  const m = value as Partial<MessageMetadata>;
  if (typeof m.event_type !== "string") return undefined;
  return { event_type: m.event_type, event_payload: (m.event_payload ?? {}) as Record<string, unknown> };
}

function arrayOf(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

/** A message as the API shows it; `metadata` only when asked for (`include_all_metadata`). */
export function messageView(m: StoredMessage, state: SlackState, includeMetadata: boolean): Record<string, unknown> {
  const view: Record<string, unknown> = { type: "message", ts: m.ts, text: m.text };
  const copy = ["user", "bot_id", "app_id", "subtype", "thread_ts", "username", "client_msg_id", "edited", "blocks", "attachments"] as const;
  for (const key of copy) if (m[key] !== undefined) view[key] = m[key];
  view["team"] = state.identity.teamId;
  if (m.icon_emoji || m.icon_url) view["icons"] = { ...(m.icon_emoji ? { emoji: m.icon_emoji } : {}), ...(m.icon_url ? { image_48: m.icon_url } : {}) };
  if (m.reactions.length) view["reactions"] = m.reactions.map((r) => ({ ...r, users: [...r.users] }));
  if (includeMetadata && m.metadata) view["metadata"] = m.metadata;
  Object.assign(view, threadFields(m, state));
  return view;
}

function threadFields(m: StoredMessage, state: SlackState): Record<string, unknown> {
  if (m.thread_ts && m.thread_ts !== m.ts) {
    const root = state.find(m.channel, m.thread_ts);
    return root?.user ? { parent_user_id: root.user } : {};
  }
  const replies = state.repliesTo(m.channel, m.ts);
  if (!replies.length) return {};
  const users = [...new Set(replies.map((r) => r.user).filter((u): u is string => !!u))];
  return {
    thread_ts: m.ts,
    reply_count: replies.length,
    reply_users_count: users.length,
    reply_users: users,
    latest_reply: replies[replies.length - 1].ts,
  };
}

const authTest: Method = (_args, { state }) => {
  const id = state.identity;
  return {
    ok: true,
    url: `https://${id.teamName.toLowerCase().replace(/\W+/g, "-")}.slack.com/`,
    team: id.teamName,
    user: id.botName,
    team_id: id.teamId,
    user_id: id.botUserId,
    bot_id: id.botId,
    is_enterprise_install: false,
  };
};

const postMessage: Method = (args, { state }) => {
  const channel = str(args["channel"]);
  if (!channel) return fail("channel_not_found");
  const text = str(args["text"]) ?? "";
  const blocks = arrayOf(args["blocks"]);
  const attachments = arrayOf(args["attachments"]);
  if (!text && !blocks?.length && !attachments?.length) return fail("no_text");
  const id = state.identity;
  const stored = state.add({
    channel,
    ts: state.clock.next(),
    text,
    origin: "api",
    user: id.botUserId,
    bot_id: id.botId,
    app_id: id.appId,
    thread_ts: str(args["thread_ts"]),
    metadata: metadataOf(args["metadata"]),
    username: str(args["username"]),
    icon_emoji: str(args["icon_emoji"]),
    icon_url: str(args["icon_url"]),
    blocks,
    attachments,
    reply_broadcast: bool(args["reply_broadcast"]) || undefined,
  });
  return { ok: true, channel, ts: stored.ts, message: messageView(stored, state, true) };
};

/** The bot's own live message at channel+ts, or Slack's error for it. */
function ownMessage(args: Args, state: SlackState, notOwn: string): StoredMessage | ApiResult {
  const channel = str(args["channel"]);
  const ts = str(args["ts"]);
  if (!channel) return fail("channel_not_found");
  const message = ts ? state.find(channel, ts) : undefined;
  if (!message) return fail("message_not_found");
  if (message.user !== state.identity.botUserId) return fail(notOwn);
  return message;
}

const isResult = (value: StoredMessage | ApiResult): value is ApiResult => "ok" in value;

const update: Method = (args, { state }) => {
  const message = ownMessage(args, state, "cant_update_message");
  if (isResult(message)) return message;
  const text = str(args["text"]);
  const edit = { previousText: message.text, text: text ?? message.text, ts: state.clock.next() };
  message.edits.push(edit);
  message.text = edit.text;
  message.edited = { user: state.identity.botUserId, ts: edit.ts };
  if (args["blocks"] !== undefined) message.blocks = arrayOf(args["blocks"]);
  if (args["attachments"] !== undefined) message.attachments = arrayOf(args["attachments"]);
  if (args["metadata"] !== undefined) message.metadata = metadataOf(args["metadata"]);
  state.changed();
  return { ok: true, channel: message.channel, ts: message.ts, text: message.text, message: messageView(message, state, true) };
};

const remove: Method = (args, { state }) => {
  const message = ownMessage(args, state, "cant_delete_message");
  if (isResult(message)) return message;
  message.deleted = true;
  state.changed();
  return { ok: true, channel: message.channel, ts: message.ts };
};

/** The message a reactions.* call names, and the emoji name without colons. */
function reactionTarget(args: Args, state: SlackState): { message: StoredMessage; name: string } | ApiResult {
  const name = str(args["name"])?.replace(/^:|:$/g, "");
  const channel = str(args["channel"]);
  const ts = str(args["timestamp"]);
  if (!channel || !ts) return fail("no_item_specified");
  if (!name) return fail("invalid_name");
  const message = state.find(channel, ts);
  return message ? { message, name } : fail("message_not_found");
}

const reactionsAdd: Method = (args, { state }) => {
  const target = reactionTarget(args, state);
  if ("ok" in target) return target;
  const me = state.identity.botUserId;
  let reaction = target.message.reactions.find((r) => r.name === target.name);
  if (reaction?.users.includes(me)) return fail("already_reacted");
  if (!reaction) target.message.reactions.push((reaction = { name: target.name, users: [], count: 0 }));
  reaction.users.push(me);
  reaction.count = reaction.users.length;
  state.changed();
  return { ok: true };
};

const reactionsRemove: Method = (args, { state }) => {
  const target = reactionTarget(args, state);
  if ("ok" in target) return target;
  const me = state.identity.botUserId;
  const reaction = target.message.reactions.find((r) => r.name === target.name);
  if (!reaction?.users.includes(me)) return fail("no_reaction");
  reaction.users = reaction.users.filter((u) => u !== me);
  reaction.count = reaction.users.length;
  if (!reaction.count) target.message.reactions = target.message.reactions.filter((r) => r !== reaction);
  state.changed();
  return { ok: true };
};

const replies: Method = (args, { state }) => {
  const channel = str(args["channel"]);
  const ts = str(args["ts"]);
  if (!channel) return fail("channel_not_found");
  if (!ts) return fail("invalid_arguments");
  const thread = state.thread(channel, ts);
  if (!thread) return fail("thread_not_found");
  const withMetadata = bool(args["include_all_metadata"]);
  return {
    ok: true,
    messages: thread.map((m) => messageView(m, state, withMetadata)),
    has_more: false,
    response_metadata: { next_cursor: "" },
  };
};

const history: Method = (args, { state }) => {
  const channel = str(args["channel"]);
  if (!channel) return fail("channel_not_found");
  const oldest = str(args["oldest"]);
  const latest = str(args["latest"]);
  const limit = Number(args["limit"] ?? 100) || 100;
  const inWindow = (m: StoredMessage) => (!oldest || compareTs(m.ts, oldest) > 0) && (!latest || compareTs(m.ts, latest) < 0);
  const topLevel = state.all(channel).filter((m) => (!m.thread_ts || m.thread_ts === m.ts || m.reply_broadcast) && inWindow(m));
  const newestFirst = topLevel.reverse();
  const withMetadata = bool(args["include_all_metadata"]);
  return {
    ok: true,
    messages: newestFirst.slice(0, limit).map((m) => messageView(m, state, withMetadata)),
    has_more: newestFirst.length > limit,
    pin_count: 0,
    response_metadata: { next_cursor: "" },
  };
};

const usersInfo: Method = (args, { state }) => {
  const id = state.identity;
  const userId = str(args["user"]);
  const bot = { name: id.botName, real_name: id.botName, display_name: id.botName, is_bot: true };
  const user = userId === id.botUserId ? bot : userId ? id.users[userId] : undefined;
  if (!userId || !user) return fail("user_not_found");
  const realName = user.real_name ?? user.name;
  const displayName = user.display_name ?? "";
  return {
    ok: true,
    user: {
      id: userId,
      team_id: id.teamId,
      name: user.name,
      deleted: false,
      real_name: realName,
      is_bot: user.is_bot ?? false,
      is_app_user: false,
      profile: {
        real_name: realName,
        real_name_normalized: realName,
        display_name: displayName,
        display_name_normalized: displayName,
        team: id.teamId,
        ...(user.is_bot ? { bot_id: id.botId } : {}),
      },
    },
  };
};

const connectionsOpen: Method = (_args, ctx) => ({ ok: true, url: ctx.openSocketUrl() });

/** Every method the fake answers, and which token it takes (Slack refuses the other kind). */
export const METHODS: Record<string, { token: "bot" | "app"; run: Method }> = {
  "auth.test": { token: "bot", run: authTest },
  "chat.postMessage": { token: "bot", run: postMessage },
  "chat.update": { token: "bot", run: update },
  "chat.delete": { token: "bot", run: remove },
  "reactions.add": { token: "bot", run: reactionsAdd },
  "reactions.remove": { token: "bot", run: reactionsRemove },
  "conversations.replies": { token: "bot", run: replies },
  "conversations.history": { token: "bot", run: history },
  "users.info": { token: "bot", run: usersInfo },
  "apps.connections.open": { token: "app", run: connectionsOpen },
};
