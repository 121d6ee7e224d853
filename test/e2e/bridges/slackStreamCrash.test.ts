/**
 * A streamed Slack reply cut by a SIGKILL is completed after the restart, at each point of the
 * stream (test/support/bridges/streamCrash.ts): the thread ends with one reply holding the whole
 * committed answer, not its first piece. The Events API, as the node is a child process.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { KILL_POINTS, streamCrashRig } from "../../support/bridges/streamCrash.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { freePort } from "../../support/ports.ts";

const SIGNING_SECRET = "slack-stream-crash-signing-secret";
let slack: FakeSlack;
let port = 0;
beforeAll(async () => void (slack = await startFakeSlack()));
afterAll(() => slack.close());

const rig = streamCrashRig({
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
});

describe("a streamed Slack reply cut by a SIGKILL, after the restart", () => {
  it.each(KILL_POINTS)("killed at $name: one reply, the whole answer", (kill) => rig.crash(kill), 90_000);
});
