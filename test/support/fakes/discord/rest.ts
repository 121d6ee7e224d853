/**
 * The fake Discord REST API (HTTP, under `/api/v10`). Formats come from Discord's API reference:
 * reference (authentication `Authorization: Bot <token>`, JSON error codes and the
 * `{ message, code, errors }` error shape), topics/rate-limits (`X-RateLimit-Limit`, `-Remaining`,
 * `-Reset`, `-Reset-After`, `-Bucket`, `-Scope`, `-Global`, the `Retry-After` header in whole
 * seconds and the 429 body `{ message, retry_after, global }`), resources/message (create, edit,
 * delete, get; multipart with `payload_json` and `files[n]`), resources/channel (get channel,
 * trigger typing: 204), resources/user (get current user, create DM), resources/webhook
 * (create, list, execute with `?wait=true`, `username` and `avatar_url`, edit webhook message;
 * execution needs no Authorization) and topics/gateway (`GET /gateway/bot`).
 *
 * The client side it must satisfy is @discordjs/rest 2.6.3 (node_modules/@discordjs/rest/dist
 * /index.js): URLs `${api}/v${version}${route}`, JSON bodies unless files are attached, and on a
 * 429 it reads `Retry-After` (seconds, plus its 50 ms offset), `X-RateLimit-Global` and the
 * bucket headers, waits, and sends the same request again.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { ChannelTypes, apiError, channelPayload, formError, guildPayload, isThreadType, type ChannelState, type Json, type Snowflake } from "./payloads.ts";
import { UnknownReferenceError, type AllowedMentions, type DiscordStore, type MessageReferenceInput, type StoredMessage, type WebhookState } from "./store.ts";

export interface CallRecord {
  method: string;
  /** The path after `/api/v10`, e.g. `/channels/300/messages`. */
  path: string;
  /** The route it matched, e.g. `POST /channels/:channel_id/messages` (or `unknown`). */
  route: string;
  query: Record<string, string>;
  body: unknown;
  /** The status answered; -1 for a connection closed without an answer (`failNext` with `reset`). */
  status: number;
  /** Whether the call's work was done (false for a 429, or a failure injected before it). */
  applied?: boolean;
  at: number;
}

/**
 * Which calls a rule or filter means: a string `"POST /channels/300/messages"` (method optional;
 * a `:name` or `*` segment matches any one segment), a RegExp tested against `"METHOD /path"`,
 * or a predicate.
 */
export type RouteMatcher = string | RegExp | ((call: { method: string; path: string; route: string }) => boolean);

/** How a call injected with `failNext` fails. */
export interface FailureOptions {
  /** Do the call's work before failing (default true): Discord applied it and its answer was lost. */
  applied?: boolean;
  /** The status answered (default 500). */
  status?: number;
  /** Close the connection without answering instead (the client sees ECONNRESET). */
  reset?: boolean;
}

interface FailureRule extends Required<FailureOptions> {
  matcher: RouteMatcher;
  remaining: number;
}

interface RateLimitRule {
  matcher: RouteMatcher;
  retryAfter: number;
  remaining: number;
  global: boolean;
}

interface Context {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Json;
  files: Json[];
}

interface Result {
  status: number;
  body?: unknown;
}

interface Route {
  method: string;
  pattern: string;
  /** false for webhook execution, which is authorised by the token in its URL. */
  auth: boolean;
  handler: (ctx: Context) => Result | Promise<Result>;
}

/** What REST needs from the rest of the fake. */
export interface RestHooks {
  token: string;
  applicationId: Snowflake;
  nonceWindowMs: number;
  gatewayUrl: () => string;
  messageCreated: (stored: StoredMessage) => void;
  messageUpdated: (stored: StoredMessage) => void;
  messageDeleted: (stored: StoredMessage) => void;
  changed: () => void;
}

const MAX_CONTENT = 2000;
const MAX_NONCE = 25;

export function matchesRoute(matcher: RouteMatcher, call: { method: string; path: string; route: string }): boolean {
  if (typeof matcher === "function") return matcher(call);
  if (matcher instanceof RegExp) return matcher.test(`${call.method} ${call.path}`);
  const [first, ...rest] = matcher.trim().split(/\s+/);
  const method = rest.length > 0 ? first.toUpperCase() : null;
  const pattern = rest.length > 0 ? rest.join(" ") : first;
  if (method && method !== call.method) return false;
  return matchPath(pattern, call.path.split("?")[0]) !== null || pattern === call.route.split(" ")[1];
}

function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i] === "*") continue;
    if (want[i].startsWith(":")) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

export class FakeRest {
  readonly calls: CallRecord[] = [];
  private readonly rateLimits: RateLimitRule[] = [];
  private readonly failures: FailureRule[] = [];
  private readonly routes: Route[];

  constructor(
    private readonly store: DiscordStore,
    private readonly hooks: RestHooks,
  ) {
    this.routes = this.buildRoutes();
  }

  rateLimitNext(matcher: RouteMatcher, retryAfterSeconds: number, times: number, global: boolean): void {
    this.rateLimits.push({ matcher, retryAfter: retryAfterSeconds, remaining: times, global });
  }

  failNext(matcher: RouteMatcher, failure: FailureOptions, times: number): void {
    this.failures.push({ matcher, remaining: times, applied: failure.applied ?? true, status: failure.status ?? 500, reset: failure.reset ?? false });
  }

  clearFailures(): void {
    this.failures.length = 0;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = (req.method ?? "GET").toUpperCase();
    const versioned = /^\/api\/v(\d+)(\/.*)$/.exec(url.pathname);
    const path = versioned ? versioned[2] : url.pathname;
    const raw = await readBody(req);
    const { body, files } = await parseBody(req, raw);
    const record: CallRecord = { method, path, route: "unknown", query: Object.fromEntries(url.searchParams), body, status: 0, at: Date.now() };
    this.calls.push(record);
    const result = await this.route(req, record, url.searchParams, body, files, versioned !== null);
    record.status = result.reset ? -1 : result.status;
    if (result.reset) res.socket?.destroy();
    else this.respond(res, record, result);
    this.hooks.changed();
  }

  private async route(req: IncomingMessage, record: CallRecord, query: URLSearchParams, body: Json, files: Json[], versioned: boolean): Promise<Result & { headers?: Record<string, string>; reset?: boolean }> {
    if (!versioned) return { status: 404, body: apiError(0, "404: Not Found") };
    for (const route of this.routes) {
      if (route.method !== record.method) continue;
      const params = matchPath(route.pattern, record.path);
      if (!params) continue;
      record.route = `${route.method} ${route.pattern}`;
      if (route.auth && req.headers.authorization !== `Bot ${this.hooks.token}`) {
        return { status: 401, body: apiError(0, "401: Unauthorized") };
      }
      const limited = this.takeRateLimit(record);
      if (limited) return limited;
      const failure = this.takeFailure(record);
      if (failure && !failure.applied) return this.failed(failure);
      const result = await this.run(route, { method: record.method, path: record.path, params, query, body, files });
      record.applied = result.status < 300;
      return failure ? this.failed(failure) : result;
    }
    return { status: 404, body: apiError(0, "404: Not Found") };
  }

  private async run(route: Route, ctx: Context): Promise<Result> {
    try {
      return await route.handler(ctx);
    } catch (error) {
      if (error instanceof UnknownReferenceError) {
        return { status: 400, body: formError("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message") };
      }
      throw error;
    }
  }

  private takeFailure(record: CallRecord): FailureRule | undefined {
    const rule = this.failures.find((r) => r.remaining > 0 && matchesRoute(r.matcher, record));
    if (rule) rule.remaining--;
    return rule;
  }

  private failed(failure: FailureRule): Result & { reset?: boolean } {
    return failure.reset ? { status: 0, reset: true } : { status: failure.status, body: apiError(0, `${failure.status}: fake Discord failed the call`) };
  }

  private takeRateLimit(record: CallRecord): (Result & { headers: Record<string, string> }) | null {
    const rule = this.rateLimits.find((r) => r.remaining > 0 && matchesRoute(r.matcher, record));
    if (!rule) return null;
    rule.remaining--;
    const headers: Record<string, string> = {
      "Retry-After": String(Math.ceil(rule.retryAfter)),
      "X-RateLimit-Limit": "5",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": ((Date.now() + rule.retryAfter * 1000) / 1000).toFixed(3),
      "X-RateLimit-Reset-After": rule.retryAfter.toFixed(3),
      "X-RateLimit-Bucket": bucketOf(record.route),
      "X-RateLimit-Scope": rule.global ? "global" : "user",
    };
    if (rule.global) headers["X-RateLimit-Global"] = "true";
    return { status: 429, headers, body: { message: "You are being rate limited.", retry_after: rule.retryAfter, global: rule.global } };
  }

  private respond(res: ServerResponse, record: CallRecord, result: Result & { headers?: Record<string, string> }): void {
    const headers: Record<string, string> = { ...result.headers };
    if (result.status !== 429 && record.route !== "unknown") {
      headers["X-RateLimit-Limit"] = "5";
      headers["X-RateLimit-Remaining"] = "4";
      headers["X-RateLimit-Reset"] = ((Date.now() + 5000) / 1000).toFixed(3);
      headers["X-RateLimit-Reset-After"] = "5.000";
      headers["X-RateLimit-Bucket"] = bucketOf(record.route);
    }
    if (result.status === 204 || result.body === undefined) {
      res.writeHead(result.status === 200 ? 204 : result.status, headers);
      res.end();
      return;
    }
    res.writeHead(result.status, { ...headers, "Content-Type": "application/json" });
    res.end(JSON.stringify(result.body));
  }

  private buildRoutes(): Route[] {
    const r = (method: string, pattern: string, handler: Route["handler"], auth = true): Route => ({ method, pattern, handler, auth });
    return [
      r("GET", "/gateway", () => ({ status: 200, body: { url: this.hooks.gatewayUrl() } }), false),
      r("GET", "/gateway/bot", () => ({
        status: 200,
        body: { url: this.hooks.gatewayUrl(), shards: 1, session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 } },
      })),
      r("GET", "/users/@me", () => ({ status: 200, body: { ...this.store.userPayload(this.store.botUser.id), verified: true, mfa_enabled: false, email: null } })),
      r("POST", "/users/@me/channels", (ctx) => this.createDm(ctx)),
      r("GET", "/users/:user_id", (ctx) =>
        this.store.users.has(ctx.params["user_id"])
          ? { status: 200, body: this.store.userPayload(ctx.params["user_id"]) }
          : { status: 404, body: apiError(10013, "Unknown User") },
      ),
      r("GET", "/guilds/:guild_id", (ctx) => this.getGuild(ctx)),
      r("GET", "/guilds/:guild_id/channels", (ctx) => this.getGuildChannels(ctx)),
      r("GET", "/guilds/:guild_id/members/:user_id", (ctx) => {
        const member = this.store.member(ctx.params["guild_id"], ctx.params["user_id"], true);
        return member ? { status: 200, body: member } : { status: 404, body: apiError(10007, "Unknown Member") };
      }),
      r("GET", "/channels/:channel_id", (ctx) => this.withChannel(ctx, (channel) => ({ status: 200, body: channelPayload(channel, this.store.users) }))),
      r("GET", "/channels/:channel_id/messages", (ctx) => this.withChannel(ctx, (channel) => this.listMessages(channel, ctx.query))),
      r("POST", "/channels/:channel_id/messages", (ctx) => this.withChannel(ctx, (channel) => this.createMessage(channel, ctx))),
      r("GET", "/channels/:channel_id/messages/:message_id", (ctx) =>
        this.withMessage(ctx, (stored) => ({ status: 200, body: stored.payload })),
      ),
      r("PATCH", "/channels/:channel_id/messages/:message_id", (ctx) => this.withMessage(ctx, (stored) => this.editMessage(stored, ctx, null))),
      r("DELETE", "/channels/:channel_id/messages/:message_id", (ctx) => this.withMessage(ctx, (stored) => this.deleteMessage(stored))),
      r("PUT", "/channels/:channel_id/messages/:message_id/reactions/:emoji/@me", (ctx) => this.withMessage(ctx, (stored) => this.react(stored, ctx, false))),
      r("DELETE", "/channels/:channel_id/messages/:message_id/reactions/:emoji/@me", (ctx) => this.withMessage(ctx, (stored) => this.react(stored, ctx, true))),
      r("POST", "/channels/:channel_id/typing", (ctx) =>
        this.withChannel(ctx, (channel) => {
          this.store.typing.set(channel.id, (this.store.typing.get(channel.id) ?? 0) + 1);
          return { status: 204 };
        }),
      ),
      r("POST", "/channels/:channel_id/webhooks", (ctx) => this.withChannel(ctx, (channel) => this.createWebhook(channel, ctx))),
      r("GET", "/channels/:channel_id/webhooks", (ctx) =>
        this.withChannel(ctx, (channel) => ({
          status: 200,
          body: [...this.store.webhooks.values()].filter((w) => w.channel_id === channel.id).map((w) => this.webhookPayload(w)),
        })),
      ),
      r("GET", "/webhooks/:webhook_id", (ctx) => this.withWebhook(ctx, null, (webhook) => ({ status: 200, body: this.webhookPayload(webhook) }))),
      r("GET", "/webhooks/:webhook_id/:token", (ctx) => this.withWebhook(ctx, ctx.params["token"], (webhook) => ({ status: 200, body: this.webhookPayload(webhook) })), false),
      r("POST", "/webhooks/:webhook_id/:token", (ctx) => this.withWebhook(ctx, ctx.params["token"], (webhook) => this.executeWebhook(webhook, ctx)), false),
      r(
        "PATCH",
        "/webhooks/:webhook_id/:token/messages/:message_id",
        (ctx) =>
          this.withWebhook(ctx, ctx.params["token"], (webhook) =>
            this.withMessage(ctx, (stored) => this.editMessage(stored, ctx, webhook)),
          ),
        false,
      ),
    ];
  }

  private withChannel(ctx: Context, then: (channel: ChannelState) => Result | Promise<Result>): Result | Promise<Result> {
    const channel = this.store.channels.get(ctx.params["channel_id"]);
    return channel ? then(channel) : { status: 404, body: apiError(10003, "Unknown Channel") };
  }

  private withMessage(ctx: Context, then: (stored: StoredMessage) => Result): Result {
    const stored = this.store.message(ctx.params["message_id"]);
    const channelId = ctx.params["channel_id"];
    if (channelId && !this.store.channels.has(channelId)) return { status: 404, body: apiError(10003, "Unknown Channel") };
    if (!stored || stored.deleted || (channelId && stored.payload.channel_id !== channelId)) {
      return { status: 404, body: apiError(10008, "Unknown Message") };
    }
    return then(stored);
  }

  private withWebhook(ctx: Context, token: string | null, then: (webhook: WebhookState) => Result | Promise<Result>): Result | Promise<Result> {
    const webhook = this.store.webhooks.get(ctx.params["webhook_id"]);
    if (!webhook) return { status: 404, body: apiError(10015, "Unknown Webhook") };
    if (token !== null && token !== webhook.token) return { status: 401, body: apiError(50027, "Invalid Webhook Token") };
    return then(webhook);
  }

  private getGuild(ctx: Context): Result {
    const guild = this.store.guilds.get(ctx.params["guild_id"]);
    return guild ? { status: 200, body: guildPayload(guild, null) } : { status: 404, body: apiError(10004, "Unknown Guild") };
  }

  private getGuildChannels(ctx: Context): Result {
    const guildId = ctx.params["guild_id"];
    if (!this.store.guilds.has(guildId)) return { status: 404, body: apiError(10004, "Unknown Guild") };
    // Threads are not the guild's channels here (resources/guild#get-guild-channels).
    const channels = [...this.store.channels.values()].filter((c) => c.guild_id === guildId && !isThreadType(c.type));
    return { status: 200, body: channels.map((c) => channelPayload(c, this.store.users)) };
  }

  private createDm(ctx: Context): Result {
    const recipient = String(ctx.body["recipient_id"] ?? "");
    if (!this.store.users.has(recipient)) return { status: 400, body: formError("recipient_id", "NUMBER_TYPE_COERCE", `Value "${recipient}" is not snowflake.`) };
    return { status: 200, body: channelPayload(this.store.dmChannel(recipient), this.store.users) };
  }

  private listMessages(channel: ChannelState, query: URLSearchParams): Result {
    const limit = Math.min(Number(query.get("limit") ?? 50), 100);
    const before = query.get("before");
    const after = query.get("after");
    let list = this.store.allMessages(channel.id).filter((m) => !m.deleted);
    if (before) list = list.filter((m) => BigInt(m.payload.id) < BigInt(before));
    if (after) list = list.filter((m) => BigInt(m.payload.id) > BigInt(after));
    // Newest first, as Discord returns them.
    const page = after ? list.slice(0, limit) : list.slice(-limit);
    return { status: 200, body: page.reverse().map((m) => m.payload) };
  }

  /** Checks shared by create, edit and webhook execution; null when the body is acceptable. */
  private validate(body: Json, files: Json[], creating: boolean): Result | null {
    const content = body["content"];
    if (content !== undefined && content !== null && typeof content !== "string") {
      return { status: 400, body: formError("content", "BASE_TYPE_STRING", "Must be a string.") };
    }
    if (typeof content === "string" && content.length > MAX_CONTENT) {
      return { status: 400, body: formError("content", "BASE_TYPE_MAX_LENGTH", `Must be ${MAX_CONTENT} or fewer in length.`) };
    }
    const nonce = body["nonce"];
    if (typeof nonce === "string" && nonce.length > MAX_NONCE) {
      return { status: 400, body: formError("nonce", "BASE_TYPE_MAX_LENGTH", `Must be ${MAX_NONCE} or fewer in length.`) };
    }
    const embeds = Array.isArray(body["embeds"]) ? body["embeds"] : [];
    const stickers = Array.isArray(body["sticker_ids"]) ? body["sticker_ids"] : [];
    if (creating && !content && embeds.length === 0 && files.length === 0 && stickers.length === 0 && !body["poll"]) {
      return { status: 400, body: apiError(50006, "Cannot send an empty message") };
    }
    return null;
  }

  private createMessage(channel: ChannelState, ctx: Context): Result {
    const invalid = this.validate(ctx.body, ctx.files, true);
    if (invalid) return invalid;
    const bot = this.store.botUser;
    const nonce = ctx.body["nonce"] as string | number | undefined;
    if (nonce !== undefined && ctx.body["enforce_nonce"] === true) {
      const earlier = this.store.findByNonce(channel.id, bot.id, nonce, this.hooks.nonceWindowMs);
      if (earlier) return { status: 200, body: earlier.payload };
    }
    const stored = this.store.createMessage({
      channel,
      author: this.store.userPayload(bot.id),
      content: typeof ctx.body["content"] === "string" ? ctx.body["content"] : "",
      allowedMentions: (ctx.body["allowed_mentions"] ?? undefined) as AllowedMentions | undefined,
      reference: (ctx.body["message_reference"] ?? undefined) as MessageReferenceInput | undefined,
      nonce,
      tts: ctx.body["tts"] === true,
      embeds: (ctx.body["embeds"] as Json[] | undefined) ?? [],
      attachments: this.attachments(channel, ctx.files),
    });
    this.hooks.messageCreated(stored);
    return { status: 200, body: stored.payload };
  }

  private editMessage(stored: StoredMessage, ctx: Context, webhook: WebhookState | null): Result {
    const authorId = String(stored.payload.author["id"]);
    const mayEdit = webhook ? stored.payload["webhook_id"] === webhook.id : authorId === this.store.botUser.id && !stored.payload["webhook_id"];
    if (!mayEdit) return { status: 403, body: apiError(50005, "Cannot edit a message authored by another user") };
    const invalid = this.validate(ctx.body, ctx.files, false);
    if (invalid) return invalid;
    this.store.editMessage(stored, {
      content: typeof ctx.body["content"] === "string" ? ctx.body["content"] : undefined,
      embeds: Array.isArray(ctx.body["embeds"]) ? (ctx.body["embeds"] as Json[]) : undefined,
      allowedMentions: (ctx.body["allowed_mentions"] ?? stored.allowedMentions) as AllowedMentions | undefined,
    });
    this.hooks.messageUpdated(stored);
    return { status: 200, body: stored.payload };
  }

  private deleteMessage(stored: StoredMessage): Result {
    stored.deleted = true;
    this.hooks.messageDeleted(stored);
    return { status: 204 };
  }

  private react(stored: StoredMessage, ctx: Context, removed: boolean): Result {
    this.store.reactions.push({ channel_id: stored.payload.channel_id, message_id: stored.payload.id, emoji: ctx.params["emoji"], removed });
    return { status: 204 };
  }

  private createWebhook(channel: ChannelState, ctx: Context): Result {
    const name = ctx.body["name"];
    const badName = nameProblem(name);
    if (badName) return { status: 400, body: formError("name", badName.code, badName.message) };
    if (channel.type === ChannelTypes.DM) return { status: 400, body: apiError(50035, "Invalid Form Body") };
    const webhook: WebhookState = {
      id: this.store.nextId(),
      token: randomBytes(24).toString("base64url"),
      channel_id: channel.id,
      guild_id: channel.guild_id,
      name: String(name),
      avatar: null,
    };
    this.store.webhooks.set(webhook.id, webhook);
    return { status: 200, body: this.webhookPayload(webhook) };
  }

  private webhookPayload(webhook: WebhookState): Json {
    return {
      id: webhook.id,
      type: 1,
      guild_id: webhook.guild_id ?? null,
      channel_id: webhook.channel_id,
      name: webhook.name,
      avatar: webhook.avatar,
      token: webhook.token,
      application_id: this.hooks.applicationId,
      user: this.store.userPayload(this.store.botUser.id),
      url: `${this.hooks.gatewayUrl().replace(/^ws/, "http").replace(/\/gateway$/, "")}/api/webhooks/${webhook.id}/${webhook.token}`,
    };
  }

  private executeWebhook(webhook: WebhookState, ctx: Context): Result {
    const invalid = this.validate(ctx.body, ctx.files, true);
    if (invalid) return invalid;
    const username = ctx.body["username"];
    if (username !== undefined && username !== null) {
      const badName = nameProblem(username);
      if (badName) return { status: 400, body: formError("username", badName.code, badName.message) };
    }
    // `thread_id`: the post goes in that thread of the webhook's channel (resources/webhook#execute-webhook).
    const threadId = ctx.query.get("thread_id");
    const channel = this.store.channels.get(threadId ?? webhook.channel_id);
    if (!channel || (threadId !== null && channel.parent_id !== webhook.channel_id)) return { status: 404, body: apiError(10003, "Unknown Channel") };
    const avatarUrl = typeof ctx.body["avatar_url"] === "string" ? ctx.body["avatar_url"] : undefined;
    const stored = this.store.createMessage({
      channel,
      author: {
        id: webhook.id,
        username: typeof username === "string" ? username : webhook.name,
        discriminator: "0000",
        global_name: null,
        avatar: avatarUrl ? createHash("md5").update(avatarUrl).digest("hex") : webhook.avatar,
        bot: true,
      },
      content: typeof ctx.body["content"] === "string" ? ctx.body["content"] : "",
      allowedMentions: (ctx.body["allowed_mentions"] ?? undefined) as AllowedMentions | undefined,
      tts: ctx.body["tts"] === true,
      embeds: (ctx.body["embeds"] as Json[] | undefined) ?? [],
      attachments: this.attachments(channel, ctx.files),
      webhookId: webhook.id,
    });
    stored.webhook = { username: typeof username === "string" ? username : undefined, avatar_url: avatarUrl };
    stored.payload["application_id"] = this.hooks.applicationId;
    this.hooks.messageCreated(stored);
    return ctx.query.get("wait") === "true" ? { status: 200, body: stored.payload } : { status: 204 };
  }

  private attachments(channel: ChannelState, files: Json[]): Json[] {
    return files.map((file) => {
      const id = this.store.nextId();
      const url = `https://cdn.discordapp.com/attachments/${channel.id}/${id}/${String(file["filename"])}`;
      return { ...file, id, url, proxy_url: url.replace("cdn.discordapp.com", "media.discordapp.net") };
    });
  }
}

/** resources/webhook: names are 1-80 characters and may not contain "clyde" or "discord". */
function nameProblem(name: unknown): { code: string; message: string } | null {
  if (typeof name !== "string" || name.length < 1 || name.length > 80) {
    return { code: "BASE_TYPE_BAD_LENGTH", message: "Must be between 1 and 80 in length." };
  }
  if (/clyde|discord/i.test(name)) return { code: "USERNAME_INVALID_CONTAINS", message: 'Username cannot contain "discord" or "clyde"' };
  return null;
}

function bucketOf(route: string): string {
  return createHash("sha1").update(route).digest("hex").slice(0, 16);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** JSON, or multipart/form-data with `payload_json` and `files[n]` (resources/message#uploading-files). */
async function parseBody(req: IncomingMessage, raw: Buffer): Promise<{ body: Json; files: Json[] }> {
  const type = req.headers["content-type"] ?? "";
  if (raw.length === 0) return { body: {}, files: [] };
  if (type.startsWith("application/json")) return { body: JSON.parse(raw.toString("utf8")) as Json, files: [] };
  if (!type.startsWith("multipart/form-data")) return { body: {}, files: [] };
  const form = await new Request("http://fake/", { method: "POST", headers: { "content-type": type }, body: raw }).formData();
  const payload = form.get("payload_json");
  const body = typeof payload === "string" ? (JSON.parse(payload) as Json) : {};
  const files: Json[] = [];
  for (const [key, value] of form.entries()) {
    if (key === "payload_json" || typeof value === "string") continue;
    files.push({ filename: value.name, size: value.size, content_type: value.type || "application/octet-stream" });
  }
  return { body, files };
}
