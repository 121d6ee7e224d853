/**
 * The Discord bridge: a soul on Discord through discord.js. It logs in with `DISCORD_TOKEN`
 * (against `DISCORD_API_URL` when set: a proxy, or a fake in tests), hands the messages the
 * policy answers to the core as perceptions, and posts the soul's speech as replies through
 * the core's EditingSink. discord.js keeps the gateway connected (heartbeats, RESUME); the
 * bridge machine shows it (discordConnection.ts).
 *
 * Exactly once, both ways, rests on the core ledger: a message replayed after a RESUME or a
 * restart is the same perception id (the Discord message id), and a post whose answer was lost
 * (a 5xx, a reset, a stop, a crash) is looked for on Discord before it is made again.
 */
import { once } from "node:events";
import { Client, Events, GatewayIntentBits, Options, Partials } from "discord.js";
import { ChannelQueue, chatSinkFor, runtimeFor, statusOf, type BridgeHandle, type BridgeStartContext } from "../core/index.ts";
import { ClientGate } from "./ClientGate.ts";
import { DaimonWebhooks } from "./DaimonWebhooks.ts";
import { watchConnection } from "./discordConnection.ts";
import { listenForMessages } from "./discordIntake.ts";
import { parseDiscordOptions, type DiscordBridgeOptions } from "./discordOptions.ts";
import { DiscordOutlet, sendableChannel } from "./DiscordOutlet.ts";
import { PostingRest } from "./PostingRest.ts";
import { TypingIndicator } from "./TypingIndicator.ts";

/** Servers (with their channels), their messages and their text, and DMs. */
const INTENTS = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages];

/** Discord answers a login in seconds; a start must not hold the node forever when it does not. */
const LOGIN_TIMEOUT_MS = 60_000;
/** How long a stop lets a post or edit already made finish before abandoning it (ClientGate.ts). */
const STOP_GRACE_MS = 1_000;

function discordClient(apiUrl: string | undefined): Client {
  return new Client({
    intents: INTENTS,
    // DM channels are not in any cache until a DM arrives: without it their messages are dropped.
    partials: [Partials.Channel],
    // No message cache: the ledger decides what is a repeat, and a long-running bot need not hold every message.
    makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 0 }),
    allowedMentions: { parse: [], repliedUser: true },
    ...(apiUrl ? { rest: { api: apiUrl } } : {}),
  });
}

/** Resolves once the gateway is READY and the guilds are in (discord.js's clientReady). */
async function login(client: Client, token: string): Promise<void> {
  const abort = new AbortController();
  const ready = once(client, Events.ClientReady, { signal: abort.signal });
  ready.catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Discord did not answer the login within ${LOGIN_TIMEOUT_MS / 1000} s`)), LOGIN_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.login(token).then(() => ready), timedOut]);
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

function readEnv(ctx: BridgeStartContext): { token: string; apiUrl?: string } {
  const token = ctx.env["DISCORD_TOKEN"];
  if (!token) throw new Error(`discord bridge ${ctx.name}: set DISCORD_TOKEN (the bot's token); it is never printed`);
  const apiUrl = ctx.env["DISCORD_API_URL"] || undefined;
  if (apiUrl !== undefined && !URL.canParse(apiUrl)) throw new Error(`discord bridge ${ctx.name}: DISCORD_API_URL is not a URL (e.g. https://discord.com/api)`);
  // discord.js appends the version itself: `.../api/v10` would ask for `.../api/v10/v10/...`, and Discord answer 404.
  if (apiUrl !== undefined && /\/v\d+\/?$/.test(new URL(apiUrl).pathname)) {
    throw new Error(`discord bridge ${ctx.name}: DISCORD_API_URL is the REST base without the version, which discord.js appends (/v10): e.g. https://discord.com/api`);
  }
  return { token, ...(apiUrl !== undefined ? { apiUrl } : {}) };
}

/** The bridge's parts, wired but not started: the runtime, the client, and what posts and listens. */
function assemble(ctx: BridgeStartContext, options: DiscordBridgeOptions, { token, apiUrl }: { token: string; apiUrl?: string }) {
  const runtime = runtimeFor(ctx, options.policy, options.ledger ? { ledger: options.ledger } : {});
  const client = discordClient(apiUrl);
  const posting = new PostingRest(token, apiUrl);
  const gate = new ClientGate();
  const report = (err: unknown, what: string) => runtime.report(err, what);
  const webhooks = options.daimonWebhooks ? new DaimonWebhooks(client) : undefined;
  const typing = new TypingIndicator((channel) => gate.run(async () => (await sendableChannel(client, channel)).sendTyping()), report);
  const deps = { client, posting, gate, typing, ledger: runtime.ledger, report, ...(webhooks ? { webhooks } : {}) };
  const sink = chatSinkFor(runtime, new DiscordOutlet(deps), new ChannelQueue(), options.streams);
  return { runtime, client, posting, gate, typing, sink, unwatch: watchConnection(client, runtime), intake: listenForMessages(client, runtime, webhooks) };
}

export async function startDiscordBridge(ctx: BridgeStartContext): Promise<BridgeHandle> {
  const options = parseDiscordOptions(ctx.entry.options);
  const env = readEnv(ctx);
  const { token, apiUrl } = env;
  const { runtime, client, posting, gate, typing, sink, unwatch, intake } = assemble(ctx, options, env);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      unwatch();
      await intake.close();
      gate.close(STOP_GRACE_MS);
      typing.close();
      await client.destroy();
      posting.close();
      await runtime.stop();
    })());

  try {
    await login(client, token);
  } catch (err) {
    // discord.js never prints the token; a message from elsewhere is cleaned all the same.
    const error = (err instanceof Error ? err.message : String(err)).split(token).join("[DISCORD_TOKEN]");
    runtime.failed(error);
    await stop().catch(() => undefined);
    throw new Error(`discord bridge ${ctx.name}: ${error}`);
  }
  try {
    // Speech redelivered from before a restart is posted from here on; messages are taken once it is followed.
    await runtime.follow(sink);
  } catch (err) {
    runtime.report(err, "following the soul's speech");
    await stop().catch(() => undefined);
    throw err;
  }
  intake.open();
  ctx.info(`discord bridge ${ctx.name}: soul ${ctx.entry.soul} as @${client.user?.username ?? "?"}${apiUrl ? ` (REST ${apiUrl})` : ""}`);
  return { name: ctx.name, runtime, status: () => statusOf(runtime), stop };
}
