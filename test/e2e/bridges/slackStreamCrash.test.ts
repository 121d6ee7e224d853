/**
 * A streamed Slack reply cut by a SIGKILL is completed after the restart, at each point of the
 * stream (test/support/bridges/streamCrash.ts): the thread ends with one reply holding the whole
 * committed answer, not its first piece. The Events API, as the node is a child process.
 */
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { crashMidStream, KILL_POINTS, type CrashPlatform } from "../../support/bridges/streamCrash.ts";
import type { NodeProcess } from "../../support/cluster/cliProcess.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { freePort } from "../../support/ports.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";

const dirs = tempDirs("ensoul-slack-stream-crash-");
const SIGNING_SECRET = "slack-stream-crash-signing-secret";
let model: ScriptedServer;
let slack: FakeSlack;
let port = 0;
const nodes: NodeProcess[] = [];
const restarted: EnsoulNode[] = [];

beforeAll(async () => {
  model = await startAnthropicServer();
  slack = await startFakeSlack();
});
afterAll(async () => {
  await model.close();
  await slack.close();
  dirs.cleanup();
});
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.kill("SIGKILL");
  for (const n of restarted.splice(0)) await n.stop();
});

const platform: CrashPlatform = {
  bridge: async () => `{ type: slack, soul: sam, options: { mode: events, port: ${(port = await freePort())} } }`,
  env: () => ({ SLACK_BOT_TOKEN: slack.identity.botToken, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl }),
  async send(text) {
    const event = slack.appMention({ channel: "C1", user: "U1", text });
    const res = await slack.postSignedEvent(`http://127.0.0.1:${port}/slack/events`, event, { signingSecret: SIGNING_SECRET });
    if (res.status !== 200) throw new Error(`the bridge answered the event ${res.status}`);
    return event["ts"] as string;
  },
  replies: (to) =>
    slack
      .messages("C1")
      .filter((m) => m.thread_ts === to)
      .map((m) => m.text),
};

describe("a streamed Slack reply cut by a SIGKILL, after the restart", () => {
  it.each(KILL_POINTS)("killed at $name: one reply, the whole answer", async (kill) => {
    await crashMidStream({ dir: dirs.make(), model, platform, kill, nodes, restarted });
  }, 90_000);
});
