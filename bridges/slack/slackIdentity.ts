/**
 * Who the bridge is on Slack, asked once at start (auth.test with the bot token): the team
 * (part of every perception id), the bot's user id (the mention to strip, its own messages to
 * skip) and its bot id (its posts, a daimon's under another name included). A token Slack
 * refuses fails the start here, with the variable named and the token never shown.
 */
import { slackCall, slackErrorCode, type SlackClient } from "./slackApi.ts";

export interface SlackIdentity {
  teamId: string;
  team: string;
  botUserId: string;
  botId?: string;
  botName: string;
}

export async function authenticate(client: SlackClient, bridge: string): Promise<SlackIdentity> {
  let result: Awaited<ReturnType<SlackClient["auth"]["test"]>>;
  try {
    result = await slackCall("auth.test", () => client.auth.test());
  } catch (err) {
    const code = slackErrorCode(err);
    if (code) throw new Error(`slack bridge ${bridge}: Slack refused SLACK_BOT_TOKEN (${code})`);
    throw new Error(`slack bridge ${bridge}: could not reach Slack to check SLACK_BOT_TOKEN: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!result.user_id || !result.team_id) throw new Error(`slack bridge ${bridge}: auth.test did not say who SLACK_BOT_TOKEN is (no user_id or team_id)`);
  return {
    teamId: result.team_id,
    team: result.team ?? result.team_id,
    botUserId: result.user_id,
    botName: result.user ?? result.user_id,
    ...(result.bot_id ? { botId: result.bot_id } : {}),
  };
}
