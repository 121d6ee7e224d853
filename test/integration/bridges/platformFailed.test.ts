/**
 * A turn that fails on a chat platform: the bridge posts nothing in the channel (the person's
 * channel is no place for a stack's file and line), takes the "thinking" sign off at once, and
 * logs the failure with the platform's message id, so the operator can find the message. Real
 * nodes, the real @slack/bolt and discord.js against the local fakes.
 */
import { afterAll, describe, expect, it } from "vitest";
import { startSlackNode } from "../../support/bridges/slackNode.ts";
import { botMessages, GENERAL, replyTo, startDiscord, startDiscordNode } from "../../support/bridges/discordNode.ts";
import { startFakeSlack } from "../../support/fakes/slack/index.ts";
import { failingSoul, THROWN, UNDECLARED } from "../../support/souls/failingSoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** Resolves with the first logged line that matches. */
function logLines() {
  const lines: string[] = [];
  return {
    lines,
    log: (line: string) => void lines.push(line),
    async find(pattern: RegExp, timeoutMs = 8000): Promise<string> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines.find((l) => pattern.test(l));
        if (hit) return hit;
        if (Date.now() > until) throw new Error(`no log line ${pattern} within ${timeoutMs} ms:\n${lines.join("\n")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

describe("a failed turn on a chat platform", () => {
  it("Slack: nothing posted, the hourglass taken off, the failure logged with the message's ts", async () => {
    const fake = await startFakeSlack({ users: { U0ADA: { name: "ada" } } });
    const log = logLines();
    // The souls in slackNode.ts are named echo: this one is the failing soul under that id.
    const node = await startSlackNode(fake, { data: dirs.make(), soul: failingSoul, log: log.log });
    try {
      const boom = fake.appMention({ channel: "C7", user: "U0ADA", text: "boom" });
      await fake.sendEvent(boom);
      const line = await log.find(/could not answer/);
      expect(line).toBe(`bridge slack-echo: soul echo could not answer slack message ${String(boom.ts)} in channel C7: ${THROWN}`);
      await fake.waitFor((s) => s.calls("reactions.remove").some((c) => c.args["timestamp"] === boom.ts), 5000);

      // The next message is answered: once its reply is there, a reply to the failed one would have been too.
      const bye = fake.appMention({ channel: "C7", user: "U0ADA", text: "bye" });
      await fake.sendEvent(bye);
      expect(await log.find(/message \S+ in channel C7: process 'talk'/)).toBe(`bridge slack-echo: soul echo could not answer slack message ${String(bye.ts)} in channel C7: ${UNDECLARED}`);
      const hello = fake.appMention({ channel: "C7", user: "U0ADA", text: "hello" });
      await fake.sendEvent(hello);
      await fake.waitFor((s) => s.messages("C7").some((m) => m.text === "echo: hello"), 8000);
      expect(fake.calls("chat.postMessage").map((c) => c.args["text"])).toEqual(["echo: hello"]);
    } finally {
      await node.stop();
      await fake.close();
    }
  });

  it("Discord: nothing posted, the failure logged with the message's id", async () => {
    const fake = await startDiscord();
    const log = logLines();
    const node = await startDiscordNode(fake, dirs.make(), { blueprint: failingSoul, log: log.log });
    try {
      const boom = fake.messageCreate({ channel_id: GENERAL, content: "<@100> boom" });
      expect(await log.find(/could not answer/)).toBe(`bridge discord-echo: soul echo could not answer discord message ${boom.id} in channel ${GENERAL}: ${THROWN}`);
      const hello = fake.messageCreate({ channel_id: GENERAL, content: "<@100> hello" });
      await replyTo(fake, GENERAL, hello.id);
      expect(botMessages(fake, GENERAL).map((m) => m.content)).toEqual(["echo: hello"]);
    } finally {
      await node.stop();
      await fake.close();
    }
  });
});
