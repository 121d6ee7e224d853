/**
 * The Slack bridge: a soul in a Slack workspace. It checks its options and tokens, learns who
 * it is (auth.test), follows the soul's speech into Slack (EditingSink over SlackOutlet), and
 * only then opens the connection that brings events in, so nothing is taken before its answer
 * can go out. A token Slack refuses fails the start, and the bridge shows `failed`.
 */
import { ChannelQueue, chatSinkFor, runtimeFor, statusOf, type BridgeHandle, type BridgeStartContext } from "../core/index.ts";
import { createSlackClient } from "./slackApi.ts";
import { connectSlack, type SlackConnection } from "./slackConnection.ts";
import { authenticate } from "./slackIdentity.ts";
import { SlackIntake } from "./SlackIntake.ts";
import { redact, slackLogger } from "./slackLogger.ts";
import { SlackNames } from "./SlackNames.ts";
import { parseSlackOptions, slackCredentials } from "./slackOptions.ts";
import { SlackOutlet } from "./SlackOutlet.ts";

export async function startSlackBridge(ctx: BridgeStartContext): Promise<BridgeHandle> {
  const options = parseSlackOptions(ctx.entry.options);
  const credentials = slackCredentials(ctx.env, options.mode, ctx.name);
  const secrets = [credentials.botToken, credentials.appToken, credentials.signingSecret].filter((s): s is string => s !== undefined);
  const logger = slackLogger(ctx.log, `slack bridge ${ctx.name}`, secrets);
  const runtime = runtimeFor(ctx, options.policy, options.ledger ? { ledger: options.ledger } : {});
  const client = createSlackClient(credentials, logger);
  let connection: SlackConnection | undefined;
  let who = "";
  try {
    const me = await authenticate(client, ctx.name);
    who = `@${me.botName} in ${me.team}`;
    const queue = new ChannelQueue({ onRateLimited: (channel, ms) => ctx.log(`slack bridge ${ctx.name}: Slack rate-limited channel ${channel}; waiting ${ms} ms`) });
    const outlet = new SlackOutlet(client, me, { daimonIcon: options.daimonIcon });
    await runtime.follow(chatSinkFor(runtime, outlet, queue, options.streams));
    const intake = new SlackIntake(runtime, me, new SlackNames(client));
    connection = await connectSlack({ options, credentials, me, logger, runtime, take: (event) => intake.take(event) });
  } catch (err) {
    const error = redact(err instanceof Error ? err.message : String(err), secrets);
    // The connection cleans up after itself when it fails: what is left is the speech consumer.
    runtime.failed(error);
    await runtime.stop().catch(() => undefined);
    throw new Error(error.startsWith("slack bridge") ? error : `slack bridge ${ctx.name}: ${error}`);
  }
  runtime.connected();
  const open: SlackConnection = connection;
  ctx.info(`slack bridge ${ctx.name}: soul ${ctx.entry.soul} as ${who} (${options.mode === "socket" ? "Socket Mode" : `Events API at ${open.url}`})`);
  return {
    name: ctx.name,
    runtime,
    status: () => statusOf(runtime, open.url ? { url: open.url } : {}),
    async stop() {
      // No new events first (one arriving now is not acked, and Slack retries it), then the speech in flight.
      await open.stop().catch((err: unknown) => runtime.report(err, "closing the Slack connection"));
      await runtime.stop();
    },
  };
}
