/**
 * The Slack bridge's channel policy in threads. A Slack thread lives in its channel (an event
 * in it carries the channel's id and the thread's `thread_ts`), so `blockChannels` and
 * `allowChannels` apply to the thread's replies as to the channel's own messages: a blocked
 * channel's threads are not answered, an allowed channel's are, also as follow-ups without a
 * mention. (Discord differs: a thread there is a channel of its own; discordThreads.test.ts.)
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import type { EventBody } from "../../../runtime/bus/index.ts";
import { SIGNING_SECRET, slackBridge, startSlackNode, watchSubject } from "../../support/bridges/slackNode.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
let fake: FakeSlack | undefined;
let node: EnsoulNode | undefined;

afterEach(async () => {
  await node?.stop();
  await fake?.close();
  node = undefined;
  fake = undefined;
});
afterAll(() => dirs.cleanup());

async function start(policy: Record<string, unknown>): Promise<{ f: FakeSlack; node: EnsoulNode; url: string }> {
  const f = (fake = await startFakeSlack({ users: { U0ADA: { name: "ada", display_name: "Ada" } } }));
  node = await startSlackNode(f, { data: dirs.make(), options: { mode: "events", port: 0, policy } });
  return { f, node, url: slackBridge(node).url ?? "" };
}

const repliesIn = (f: FakeSlack, channel: string, thread: string) => f.messages(channel).filter((m) => m.thread_ts === thread);

/** The reason the bridge gave for ignoring the message with this ts, once it has. */
function ignoredReason(events: { seen: { body: unknown }[]; until<T>(pick: (seen: { body: unknown }[]) => T | undefined): Promise<T> }, ts: string): Promise<string> {
  return events.until((seen) => {
    const event = seen.map((e) => e.body as EventBody).find((b) => b.type === "bridge.ignored" && (b.data as { messageId?: string }).messageId === ts);
    return event ? String((event.data as { reason: string }).reason) : undefined;
  });
}

describe("the Slack policy in threads", () => {
  it("blockChannels: a mention in a thread of a blocked channel is ignored, naming the channel; another channel's thread is answered", async () => {
    const { f, node, url } = await start({ blockChannels: ["C1"] });
    const events = watchSubject(node, node.subjects.events("echo"));
    const top = f.channelMessage({ channel: "C1", user: "U0ADA", text: "a thread starts here" });
    const inThread = f.appMention({ channel: "C1", user: "U0ADA", text: "in a blocked thread", thread_ts: top.ts as string });
    expect((await f.postSignedEvent(url, inThread, { signingSecret: SIGNING_SECRET })).status).toBe(200);
    expect(await ignoredReason(events, inThread.ts as string)).toBe("channel C1 is blocked (policy.blockChannels)");

    const elsewhere = f.appMention({ channel: "C2", user: "U0ADA", text: "in an open thread", thread_ts: "1700000000.000001" });
    await f.postSignedEvent(url, elsewhere, { signingSecret: SIGNING_SECRET });
    expect((await f.waitFor(() => repliesIn(f, "C2", "1700000000.000001")[0], 5000)).text).toBe("echo: in an open thread");
    events.stop();
    expect(f.messages("C1")).toEqual([]);
  });

  it("allowChannels: an allowed channel's thread is answered, its follow-ups too; a thread elsewhere is ignored", async () => {
    const { f, node, url } = await start({ allowChannels: ["C2"] });
    const events = watchSubject(node, node.subjects.events("echo"));
    const thread = "1700000000.000100";
    await f.postSignedEvent(url, f.appMention({ channel: "C2", user: "U0ADA", text: "allowed thread", thread_ts: thread }), { signingSecret: SIGNING_SECRET });
    await f.waitFor(() => repliesIn(f, "C2", thread).length === 1, 5000);
    // A follow-up without a mention, in the thread the soul now speaks in.
    await f.postSignedEvent(url, f.channelMessage({ channel: "C2", user: "U0ADA", text: "and a follow-up", thread_ts: thread }), { signingSecret: SIGNING_SECRET });
    await f.waitFor(() => repliesIn(f, "C2", thread).length === 2, 5000);
    expect(repliesIn(f, "C2", thread).map((m) => m.text)).toEqual(["echo: allowed thread", "echo: and a follow-up"]);

    const outside = f.appMention({ channel: "C1", user: "U0ADA", text: "not allowed here", thread_ts: "1700000000.000200" });
    await f.postSignedEvent(url, outside, { signingSecret: SIGNING_SECRET });
    expect(await ignoredReason(events, outside.ts as string)).toBe("channel C1 is not in policy.allowChannels");
    events.stop();
    expect(f.messages("C1")).toEqual([]);
  });
});
