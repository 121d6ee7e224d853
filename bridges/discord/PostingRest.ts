/**
 * The REST client the bridge posts with: Discord's REST API without the retries discord.js's
 * own client makes on its own. A post is not idempotent (a webhook's takes no nonce; a bot's
 * nonce is remembered for minutes only), and discord.js sends a request again after a 5xx, a
 * reset connection or its own timeout, any of which may come after Discord made the message:
 * it would show twice. Here such a failure comes back to the bridge, whose ledger recorded the
 * post before it was made, and the next try looks for the post on Discord before making it
 * (findLostPost.ts). A 429 is still waited out and sent again: it means nothing was made.
 * Reads and edits keep discord.js's client, whose retries do no harm there.
 *
 * Each post takes the ClientGate's signal: a post abandoned at a stop is aborted, so it is
 * never sent after the bridge let it go.
 */
import { makeURLSearchParams, REST, Routes, type APIMessage, type RESTPostAPIChannelMessageJSONBody, type RESTPostAPIWebhookWithTokenJSONBody } from "discord.js";

export interface WebhookCredentials {
  id: string;
  token: string;
}

export class PostingRest {
  readonly #rest: REST;

  /** `apiUrl`: the REST base without the version, as discord.js's client takes it (`DISCORD_API_URL`). */
  constructor(token: string, apiUrl: string | undefined) {
    this.#rest = new REST({ version: "10", retries: 0, ...(apiUrl ? { api: apiUrl } : {}) }).setToken(token);
  }

  /** A message by the bot (resources/message#create-message). */
  async createMessage(channelId: string, body: RESTPostAPIChannelMessageJSONBody, signal: AbortSignal): Promise<APIMessage> {
    return (await this.#rest.post(Routes.channelMessages(channelId), { body, signal })) as APIMessage;
  }

  /** A message by a webhook, in `threadId` when set (resources/webhook#execute-webhook, `wait` for the message back). */
  async executeWebhook(webhook: WebhookCredentials, body: RESTPostAPIWebhookWithTokenJSONBody, threadId: string | undefined, signal: AbortSignal): Promise<APIMessage> {
    const query = makeURLSearchParams({ wait: true, ...(threadId !== undefined ? { thread_id: threadId } : {}) });
    return (await this.#rest.post(Routes.webhook(webhook.id, webhook.token), { body, query, auth: false, signal })) as APIMessage;
  }

  close(): void {
    this.#rest.clearHashSweeper();
    this.#rest.clearHandlerSweeper();
  }
}
