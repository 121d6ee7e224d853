/**
 * The Slack bridge on the HTTP Events API, end to end: a real node whose bridge serves
 * `POST /slack/events` with the real @slack/bolt, Slack's signed requests sent by the fake
 * Slack, and the bridge's replies read back from the fake's Web API. Also what a bridge that
 * cannot start says: a missing or refused token, named, never printed; it stops the node's
 * start, or, marked optional, shows failed.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { perceptionsOf, SIGNING_SECRET, slackBridge, slackEnv, startSlackNode, watchSubject } from "../../support/bridges/slackNode.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
const EVENTS = { mode: "events", port: 0 };
let fake: FakeSlack | undefined;
let nodes: EnsoulNode[] = [];

afterEach(async () => {
  for (const node of nodes.splice(0).reverse()) await node.stop();
  await fake?.close();
  fake = undefined;
});
afterAll(() => dirs.cleanup());

async function start(data = dirs.make(), env?: Record<string, string | undefined>, options: Record<string, unknown> = EVENTS, optional = false): Promise<{ f: FakeSlack; node: EnsoulNode; url: string }> {
  const f = (fake ??= await startFakeSlack({ users: { U0ADA: { name: "ada", display_name: "Ada" } } }));
  const node = await startSlackNode(f, { data, options, optional, ...(env ? { env } : {}) });
  nodes.push(node);
  return { f, node, url: slackBridge(node).url ?? "" };
}

/** The error a start that the bridge stops rejects with. */
async function startError(env: Record<string, string | undefined> | undefined, options: Record<string, unknown>): Promise<string> {
  const f = (fake ??= await startFakeSlack());
  const error = await startSlackNode(f, { data: dirs.make(), options, ...(env ? { env } : {}) }).then(
    (node) => (nodes.push(node), new Error("the node started")),
    (err: unknown) => err as Error,
  );
  return error.message;
}

const repliesIn = (f: FakeSlack, channel: string, thread: string) => f.messages(channel).filter((m) => m.thread_ts === thread);

describe("the Slack bridge on the Events API", () => {
  it("takes a signed mention, acks it with 200, and answers once in its thread", async () => {
    const { f, node, url } = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/slack\/events$/);
    expect(slackBridge(node).state).toBe("online");
    const perceive = watchSubject(node, node.subjects.perceive("echo"));
    const mention = f.appMention({ channel: "C1", user: "U0ADA", text: "over http" });
    const res = await f.postSignedEvent(url, mention, { signingSecret: SIGNING_SECRET });
    expect(res.status).toBe(200);
    // Acked only once the perception is on the bus.
    expect(perceptionsOf(perceive.seen).map((p) => p.id)).toEqual([`slack:T0001:C1:${mention.ts as string}`]);
    const reply = await f.waitFor(() => repliesIn(f, "C1", mention.ts as string)[0], 5000);
    perceive.stop();
    expect(reply.text).toBe("echo: over http");
    expect(perceptionsOf(perceive.seen)[0]?.body).toMatchObject({ content: "over http", name: "Ada" });
  });

  it("refuses a bad signature and a stale timestamp with 401, publishing nothing; answers url_verification", async () => {
    const { f, node, url } = await start();
    const perceive = watchSubject(node, node.subjects.perceive("echo"));
    const forged = await f.postSignedEvent(url, f.appMention({ channel: "C1", user: "U0ADA", text: "forged" }), { signingSecret: SIGNING_SECRET, badSignature: true });
    const stale = await f.postSignedEvent(url, f.appMention({ channel: "C1", user: "U0ADA", text: "stale" }), { signingSecret: SIGNING_SECRET, timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect([forged.status, stale.status]).toEqual([401, 401]);
    const challenge = await f.postSignedEvent(url, { type: "url_verification", challenge: "c-42", token: "fake-verification-token" }, { signingSecret: SIGNING_SECRET });
    expect(challenge).toMatchObject({ status: 200, json: { challenge: "c-42" } });
    // A good one after them: it is the only perception.
    const good = f.appMention({ channel: "C1", user: "U0ADA", text: "genuine" });
    expect((await f.postSignedEvent(url, good, { signingSecret: SIGNING_SECRET })).status).toBe(200);
    await f.waitFor(() => repliesIn(f, "C1", good.ts as string).length === 1, 5000);
    perceive.stop();
    expect(perceptionsOf(perceive.seen).map((p) => p.body.content)).toEqual(["genuine"]);
    expect(f.messages()).toHaveLength(1);
    expect(slackBridge(node).counters["received"]).toBe(1);
  });

  it("answers once when Slack delivers the same event again with X-Slack-Retry-Num", async () => {
    const { f, node, url } = await start();
    const body = f.eventCallback(f.appMention({ channel: "C2", user: "U0ADA", text: "again?" }));
    const ts = body.event["ts"] as string;
    expect((await f.postSignedEvent(url, body as unknown as Record<string, unknown>, { signingSecret: SIGNING_SECRET })).status).toBe(200);
    await f.waitFor(() => repliesIn(f, "C2", ts).length === 1, 5000);
    for (const retryNum of [1, 2]) {
      const retry = await f.postSignedEvent(url, body as unknown as Record<string, unknown>, { signingSecret: SIGNING_SECRET, retryNum, retryReason: "http_timeout" });
      expect(retry.status).toBe(200);
    }
    expect(slackBridge(node).counters).toMatchObject({ perceptions: 1, duplicates: 2, posted: 1 });
    expect(repliesIn(f, "C2", ts)).toHaveLength(1);
  });

  it("answers once when the retry comes after the node restarted on the same data", async () => {
    const data = dirs.make();
    const first = await start(data);
    const f = first.f;
    const body = f.eventCallback(f.appMention({ channel: "C3", user: "U0ADA", text: "before the restart" }));
    const ts = body.event["ts"] as string;
    expect((await f.postSignedEvent(first.url, body as unknown as Record<string, unknown>, { signingSecret: SIGNING_SECRET })).status).toBe(200);
    await f.waitFor(() => repliesIn(f, "C3", ts).length === 1, 5000);
    await first.node.stop();
    nodes = nodes.filter((n) => n !== first.node);

    const second = await start(data);
    const retry = await f.postSignedEvent(second.url, body as unknown as Record<string, unknown>, { signingSecret: SIGNING_SECRET, retryNum: 1, retryReason: "http_timeout" });
    expect(retry.status).toBe(200);
    expect(slackBridge(second.node).counters).toMatchObject({ received: 1, duplicates: 1, perceptions: 0 });
    // Something new after it is answered: the retry's answer, had there been one, would be posted by then.
    const next = f.appMention({ channel: "C3", user: "U0ADA", text: "after the restart" });
    await f.postSignedEvent(second.url, next, { signingSecret: SIGNING_SECRET });
    await f.waitFor(() => repliesIn(f, "C3", next.ts as string).length === 1, 5000);
    expect(repliesIn(f, "C3", ts).map((m) => m.text)).toEqual(["echo: before the restart"]);
  });
});

describe("a Slack bridge that cannot start", () => {
  it("stops the node's start, naming the missing variable; marked optional, it shows failed with it", async () => {
    const f = (fake = await startFakeSlack());
    const noSecret = { SLACK_BOT_TOKEN: f.identity.botToken, SLACK_API_URL: f.apiUrl };
    expect(await startError(noSecret, EVENTS)).toMatch(/^bridge slack-echo \(slack, soul echo\) cannot start: .*SLACK_SIGNING_SECRET/);
    expect(await startError(noSecret, { mode: "socket" })).toMatch(/SLACK_APP_TOKEN/);
    expect(await startError({}, { mode: "socket" })).toMatch(/SLACK_BOT_TOKEN/);
    const { node } = await start(undefined, noSecret, EVENTS, true);
    expect(slackBridge(node)).toMatchObject({ state: "failed", lastError: expect.stringMatching(/SLACK_SIGNING_SECRET/) });
  });

  it("stops the start when Slack refuses a token, never printing it", async () => {
    const f = (fake = await startFakeSlack());
    const wrongBot = "xoxb-wrong-secret-123456";
    const bot = await startError({ ...slackEnv(f), SLACK_BOT_TOKEN: wrongBot }, EVENTS);
    expect(bot).toMatch(/refused SLACK_BOT_TOKEN \(invalid_auth\)/);
    expect(bot).not.toContain(wrongBot);

    const wrongApp = "xapp-wrong-secret-654321";
    const { node: socket } = await start(undefined, { ...slackEnv(f), SLACK_APP_TOKEN: wrongApp }, { mode: "socket" }, true);
    expect(slackBridge(socket)).toMatchObject({ state: "failed", lastError: expect.stringMatching(/refused SLACK_APP_TOKEN \(invalid_auth\)/) });
    expect(JSON.stringify(socket.status())).not.toContain(wrongApp);
  });

  it("refuses options it does not know, with the field named", async () => {
    expect(await startError(undefined, { mode: "events", port: 0, channel: "C1" })).toMatch(/channel/);
    expect(await startError(undefined, { mode: "socket", port: 3100 })).toMatch(/port/);
  });
});
