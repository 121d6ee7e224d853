/**
 * Channels are independent: one channel whose replies the platform holds back with a
 * minute-long 429 does not delay another channel's replies, on Slack (the bridge's ChannelQueue
 * waits the Retry-After out) and on Discord (discord.js's REST client does). The held reply is
 * not lost: the node stops without waiting the minute out, and the next start posts it, once.
 */
import { afterAll, describe, expect, it } from "vitest";
import { GENERAL, THREAD, botMessages, replyTo, startDiscord, startDiscordNode } from "../../support/bridges/discordNode.ts";
import { startSlackNode } from "../../support/bridges/slackNode.ts";
import { startFakeSlack } from "../../support/fakes/slack/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** A minute: what a busy platform may answer, far longer than the other channel may wait. */
const HELD_SECONDS = 60;
/** Well inside the minute, well above a loaded machine's turn. */
const PROMPT_MS = 15_000;

describe("one channel rate-limited for a minute", () => {
  it("Slack: a reply in another channel is posted meanwhile; the held one is posted after a restart", async () => {
    const slack = await startFakeSlack();
    const data = dirs.make();
    let node = await startSlackNode(slack, { data });
    try {
      slack.rateLimitNext("chat.postMessage", HELD_SECONDS);
      const held = slack.appMention({ channel: "C1", user: "U1", text: "held back" });
      await slack.sendEvent(held);
      await slack.waitFor((s) => s.calls("chat.postMessage").some((c) => c.args["channel"] === "C1"), PROMPT_MS);

      const other = slack.appMention({ channel: "C2", user: "U1", text: "not held" });
      await slack.sendEvent(other);
      const reply = await slack.waitFor((s) => s.messages("C2").find((m) => m.thread_ts === other.ts), PROMPT_MS);
      expect(reply.text).toBe("echo: not held");
      expect(slack.messages("C1")).toEqual([]);

      const stopping = Date.now();
      await node.stop();
      expect(Date.now() - stopping, "the stop does not wait the 429 out").toBeLessThan(PROMPT_MS);
      node = await startSlackNode(slack, { data });
      const late = await slack.waitFor((s) => s.messages("C1").find((m) => m.thread_ts === held.ts), PROMPT_MS);
      expect(late.text).toBe("echo: held back");
      expect(slack.messages("C1").filter((m) => m.thread_ts === held.ts)).toHaveLength(1);
    } finally {
      await node.stop();
      await slack.close();
    }
  }, 60_000);

  it("Discord: a reply in another channel is posted meanwhile", async () => {
    const discord = await startDiscord();
    const node = await startDiscordNode(discord, dirs.make());
    try {
      discord.rateLimitNext("POST /channels/300/messages", HELD_SECONDS, 1);
      const held = discord.messageCreate({ content: "<@100> held back" });
      await discord.waitFor((f) => f.calls("POST /channels/300/messages").some((c) => c.status === 429), PROMPT_MS);

      const other = discord.messageCreate({ channel_id: THREAD, content: "<@100> not held" });
      const reply = await replyTo(discord, THREAD, other.id, PROMPT_MS);
      expect(reply.content).toBe("echo: not held");
      expect(botMessages(discord, GENERAL).filter((m) => (m.message_reference as { message_id?: string } | undefined)?.message_id === held.id)).toEqual([]);
    } finally {
      await node.stop();
      await discord.close();
    }
  }, 60_000);
});
