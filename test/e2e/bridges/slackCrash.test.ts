/**
 * Exactly one Slack reply across a crash: `ensoul up` with a Slack bridge (Events API mode) in
 * a child process, pointed at the fake Slack in this process. Slack delivers a mention; the
 * soul's model holds its answer; the node is SIGKILLed mid-turn and started again on the same
 * data; Slack retries the event (X-Slack-Retry-Num), as it does when a request went unanswered.
 * The thread ends with exactly one reply.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { until } from "../../support/cluster/busWatch.ts";
import { spawnNode, type NodeProcess } from "../../support/cluster/cliProcess.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";
import { freePort } from "../../support/ports.ts";

const dirs = tempDirs("ensoul-slack-crash-");
const SIGNING_SECRET = "slack-crash-signing-secret";
let model: ScriptedServer;
let slack: FakeSlack;
let release: () => void;
const nodes: NodeProcess[] = [];

beforeAll(async () => {
  model = await startAnthropicServer();
  slack = await startFakeSlack();
});
afterAll(async () => {
  release?.();
  await model.close();
  await slack.close();
  dirs.cleanup();
});
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.kill("SIGKILL");
});

it("a node SIGKILLed between the Slack event and the reply posts exactly one reply after it restarts", async () => {
  const barrier = new Promise<void>((resolve) => (release = resolve));
  model.reset().otherwise({ type: "reply", after: barrier, text: "Exactly once, from Slack." });
  const dir = dirs.make();
  const port = await freePort();
  writeFileSync(join(dir, "slack.yaml"), `cluster: slackcrash\nsouls:\n  - { id: sam, blueprint: samantha }\nbridges:\n  - { type: slack, soul: sam, options: { mode: events, port: ${port} } }\n`);
  const env = {
    ANTHROPIC_API_KEY: "sk-ant-test-slack-crash",
    ANTHROPIC_BASE_URL: model.url,
    SLACK_BOT_TOKEN: slack.identity.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
  };
  const args = [join(dir, "slack.yaml"), "--data", join(dir, "data")];
  const url = `http://127.0.0.1:${port}/slack/events`;
  const event = slack.appMention({ channel: "C1", user: "U1", text: "are you there?" });

  const first = spawnNode(args, env);
  nodes.push(first);
  await first.waitFor(/bridge slack-sam \(slack, soul sam\): online/);
  expect((await slack.postSignedEvent(url, event, { signingSecret: SIGNING_SECRET })).status).toBe(200);
  await until(() => model.requests.length > 0, 30_000, "the turn's model request");
  await first.kill("SIGKILL");
  nodes.splice(nodes.indexOf(first), 1);

  const second = spawnNode(args, env);
  nodes.push(second);
  await second.waitFor(/bridge slack-sam \(slack, soul sam\): online/);
  expect((await slack.postSignedEvent(url, event, { signingSecret: SIGNING_SECRET, retryNum: 1, retryReason: "http_timeout" })).status).toBe(200);
  release();
  await slack.waitFor((s) => s.messages("C1").find((m) => m.thread_ts === event["ts"] && m.text === "Exactly once, from Slack."), 30_000);
  // Give a second reply, if there were one, time to show.
  await new Promise((r) => setTimeout(r, 500));
  expect(slack.messages("C1").filter((m) => m.thread_ts === event["ts"]).map((m) => m.text)).toEqual(["Exactly once, from Slack."]);
}, 90_000);
