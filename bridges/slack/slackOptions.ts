/**
 * The Slack bridge's `options` in the cluster config and its secrets in the environment,
 * checked before anything connects, so a typo or a missing token is one clear error:
 *
 *   - type: slack
 *     soul: claudius
 *     options: { mode: socket }                       # SLACK_BOT_TOKEN + SLACK_APP_TOKEN
 *   - type: slack
 *     soul: samantha
 *     options: { mode: events, port: 3100 }          # SLACK_BOT_TOKEN + SLACK_SIGNING_SECRET, POST /slack/events
 *
 * Secrets come only from the environment the node was given, never from the config file, and
 * no error names more of a secret than the variable it is read from.
 */
import { z } from "zod";
import { bridgePolicySchema, ledgerBoundsSchema, streamBoundsSchema } from "../core/index.ts";

const common = {
  name: z.string().regex(/^[A-Za-z0-9_-]+$/).optional(),
  policy: bridgePolicySchema.optional(),
  /** The emoji a daimon posts under (its own name is the `username`); Slack's chat:write.customize scope. */
  daimonIcon: z.string().regex(/^:[a-z0-9_+'-]+:$/, "an emoji name between colons, like :crystal_ball:").default(":crystal_ball:"),
  /** What the ledger keeps and the streams followed at once (bridges/core/bridgeBounds.ts). */
  ledger: ledgerBoundsSchema.optional(),
  streams: streamBoundsSchema.optional(),
};

const socketSchema = z.strictObject({
  mode: z.literal("socket"),
  ...common,
  /**
   * The Socket Mode client's ping timeout, which the SDK also uses as the wait before each
   * reconnect (times the failures in a row): lower reconnects sooner, higher tolerates a slow link.
   */
  clientPingTimeoutMs: z.number().int().min(100).max(120_000).default(5000),
});

const eventsSchema = z.strictObject({
  mode: z.literal("events"),
  ...common,
  port: z.number().int().min(0).max(65_535).default(3100),
  /** Loopback unless said otherwise: Slack reaches it through the proxy or tunnel in front. */
  host: z.string().min(1).default("127.0.0.1"),
});

export const slackOptionsSchema = z.discriminatedUnion("mode", [socketSchema, eventsSchema]);

export type SlackBridgeOptions = z.infer<typeof slackOptionsSchema>;
export type SlackMode = SlackBridgeOptions["mode"];

/** `mode` defaults to `socket`: it needs no public endpoint. */
export function parseSlackOptions(options: unknown): SlackBridgeOptions {
  const given = options ?? {};
  const withMode = typeof given === "object" && given !== null && !Array.isArray(given) && !("mode" in given) ? { mode: "socket", ...given } : given;
  const parsed = slackOptionsSchema.safeParse(withMode);
  if (!parsed.success) throw new Error(`slack bridge options: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export interface SlackCredentials {
  botToken: string;
  /** Socket mode. */
  appToken?: string;
  /** Events mode. */
  signingSecret?: string;
  /** The Web API base URL (`SLACK_API_URL`), ending in `/`; absent: Slack's own. */
  apiUrl?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, bridge: string, variable: string, what: string): string {
  const value = env[variable]?.trim();
  if (!value) throw new Error(`slack bridge ${bridge}: set ${variable} (${what}); it is never printed`);
  return value;
}

function apiUrlOf(env: Env, bridge: string): string | undefined {
  const raw = env["SLACK_API_URL"]?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`slack bridge ${bridge}: SLACK_API_URL is not a URL (expected like https://slack.com/api/)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`slack bridge ${bridge}: SLACK_API_URL must be http(s), not ${url.protocol}`);
  // WebClient appends the method name to the base as a string.
  return url.href.endsWith("/") ? url.href : `${url.href}/`;
}

/** The secrets `mode` needs, from `env`; rejects naming the variable that is missing or wrong. */
export function slackCredentials(env: Env, mode: SlackMode, bridge: string): SlackCredentials {
  const botToken = required(env, bridge, "SLACK_BOT_TOKEN", "the bot token, xoxb-...");
  const apiUrl = apiUrlOf(env, bridge);
  const base = { botToken, ...(apiUrl ? { apiUrl } : {}) };
  if (mode === "events") return { ...base, signingSecret: required(env, bridge, "SLACK_SIGNING_SECRET", "the app's signing secret, for the Events API") };
  const appToken = required(env, bridge, "SLACK_APP_TOKEN", "the app-level token with connections:write, xapp-..., for Socket Mode");
  // Another kind of token is refused by apps.connections.open with an error the SDK retries forever.
  if (!appToken.startsWith("xapp-")) throw new Error(`slack bridge ${bridge}: SLACK_APP_TOKEN is not an app-level token (those start with xapp-)`);
  return { ...base, appToken };
}
