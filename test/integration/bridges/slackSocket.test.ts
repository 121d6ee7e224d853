/**
 * The Slack bridge in Socket Mode, end to end: a real node (in-process bus, real LMDB) running
 * the bridge on the real @slack/bolt, against the fake Slack (test/support/fakes/slack). What
 * Slack sends arrives over the fake's Socket Mode WebSocket; what the bridge does is read back
 * from the fake's Web API log and its messages.
 */
import { EventEmitter } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BridgeRuntime, DEFAULT_POLICY } from "../../../bridges/core/index.ts";
import { watchSocket } from "../../../bridges/slack/socketWatch.ts";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { perceptionsOf, poll, slackBridge, startSlackNode, watchBridgeStates, watchSubject } from "../../support/bridges/slackNode.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
let fake: FakeSlack;
let node: EnsoulNode;

beforeAll(async () => {
  fake = await startFakeSlack({ users: { U0ADA: { name: "ada", real_name: "Ada Lovelace", display_name: "Ada" } } });
  node = await startSlackNode(fake, { data: dirs.make() });
});

afterAll(async () => {
  // The bridge first: a Socket Mode client whose server vanished would keep reconnecting.
  await node?.stop();
  await fake?.close();
  dirs.cleanup();
});

const repliesIn = (channel: string, thread: string) => fake.messages(channel).filter((m) => m.thread_ts === thread);

/** The soul's answer to a message is complete (posted, its thread joined) once the hourglass is off it. */
const settled = (channel: string, ts: string) => fake.waitFor((s) => s.calls("reactions.remove").some((c) => c.args["channel"] === channel && c.args["timestamp"] === ts), 5000);

describe("the Slack bridge over Socket Mode", () => {
  it("starts online, authenticated as the fake's bot", () => {
    expect(slackBridge(node)).toMatchObject({ name: "slack-echo", type: "slack", soul: "echo", state: "online" });
    expect(fake.calls("auth.test")).toHaveLength(1);
    expect(fake.openConnections).toBe(1);
  });

  it("turns a mention into one perception and answers once in its thread, with the hourglass on while it thinks", async () => {
    const perceive = watchSubject(node, node.subjects.perceive("echo"));
    const mention = fake.appMention({ channel: "C1", user: "U0ADA", text: "hello there" });
    const ts = mention.ts as string;
    await fake.sendEvent(mention);
    const reply = await fake.waitFor((s) => repliesIn("C1", ts)[0], 5000);
    expect(reply).toMatchObject({ text: "echo: hello there", thread_ts: ts, metadata: { event_type: "ensoul_speech", event_payload: { part: 0 } } });
    await fake.waitFor((s) => s.calls("reactions.remove").some((c) => c.args["timestamp"] === ts));
    perceive.stop();

    const [perception] = perceptionsOf(perceive.seen);
    expect(perception).toMatchObject({ id: `slack:T0001:C1:${ts}`, body: { content: "hello there", name: "Ada", meta: { platform: "slack", channel: "C1", messageId: ts, direct: false, userId: "U0ADA" } } });
    const order = fake
      .calls()
      .filter((c) => ["reactions.add", "chat.postMessage", "reactions.remove"].includes(c.method))
      .map((c) => c.method);
    expect(order).toEqual(["reactions.add", "chat.postMessage", "reactions.remove"]);
    expect(fake.calls("reactions.add")[0]?.args).toMatchObject({ channel: "C1", timestamp: ts, name: "hourglass_flowing_sand" });
    expect(fake.reactions("C1", ts)).toEqual([]);
    expect(fake.acks().length).toBeGreaterThanOrEqual(1);
  });

  it("answers a follow-up in the soul's thread without a mention, and ignores channel chatter with a bridge.ignored event", async () => {
    const events = watchSubject(node, node.subjects.events("echo"));
    const mention = fake.appMention({ channel: "C2", user: "U0ADA", text: "start" });
    const ts = mention.ts as string;
    await fake.sendEvent(mention);
    await settled("C2", ts);
    expect(repliesIn("C2", ts)).toHaveLength(1);

    const chatter = fake.channelMessage({ channel: "C2", user: "U0ADA", text: "not for the bot" });
    await fake.sendEvent(chatter);
    const ignored = await events.until((seen) => seen.find((e) => e.kind === "event" && e.body.type === "bridge.ignored"));
    expect(ignored).toMatchObject({ causation: `slack:T0001:C2:${chatter.ts as string}`, body: { data: { bridge: "slack-echo", channel: "C2", reason: expect.stringMatching(/not mentioned/) } } });

    await fake.sendEvent(fake.channelMessage({ channel: "C2", user: "U0ADA", text: "and more", thread_ts: ts }));
    await fake.waitFor(() => repliesIn("C2", ts).length === 2, 5000);
    events.stop();
    expect(repliesIn("C2", ts).map((m) => m.text)).toEqual(["echo: start", "echo: and more"]);
    expect(fake.messages("C2")).toHaveLength(2);
    expect(slackBridge(node).counters["ignored"]).toBeGreaterThanOrEqual(1);
  });

  it("answers a direct message, and takes no bot's message as a person's", async () => {
    const dm = fake.directMessage({ channel: "D1", user: "U0ADA", text: "psst" });
    await fake.sendEvent(dm);
    await fake.waitFor(() => repliesIn("D1", dm.ts as string).length === 1, 5000);
    expect(repliesIn("D1", dm.ts as string)[0]?.text).toBe("echo: psst");

    const perceive = watchSubject(node, node.subjects.perceive("echo"));
    // The bot's own post echoed back (a daimon's under its own name too), and another bot.
    await fake.sendEvent(fake.botMessage({ channel: "D1", text: "echo: psst", username: "Oracle" }));
    await fake.sendEvent(fake.botMessage({ channel: "D1", text: "beep", bot_id: "B0OTHER" }));
    // A person after them: once it is answered, a perception of either bot message would have been seen.
    const after = fake.directMessage({ channel: "D1", user: "U0ADA", text: "after the bots" });
    await fake.sendEvent(after);
    await fake.waitFor(() => repliesIn("D1", after.ts as string).length === 1, 5000);
    perceive.stop();
    expect(perceptionsOf(perceive.seen).map((p) => p.body.content)).toEqual(["after the bots"]);
  });

  it("answers a mention once when Slack sends it as app_mention and as message, and again as a retry", async () => {
    const mention = fake.appMention({ channel: "C3", user: "U0ADA", text: "only once" });
    const ts = mention.ts as string;
    const asMessage = { ...mention, type: "message", channel_type: "channel" };
    await Promise.all([fake.sendEvent(mention), fake.sendEvent(asMessage)]);
    await fake.waitFor(() => repliesIn("C3", ts).length === 1, 5000);
    const delivery = await fake.sendEvent(mention, { retryAttempt: 1, retryReason: "timeout" });
    expect(delivery.envelope_id).toBeTruthy();
    // A later message answered in its own thread: by then a second answer to the first would be here.
    const later = fake.appMention({ channel: "C3", user: "U0ADA", text: "later" });
    await fake.sendEvent(later);
    await fake.waitFor(() => repliesIn("C3", later.ts as string).length === 1, 5000);
    expect(repliesIn("C3", ts)).toHaveLength(1);
    expect(slackBridge(node).counters["duplicates"]).toBeGreaterThanOrEqual(2);
  });

  it("posts a rate-limited reply once, after Slack's Retry-After", async () => {
    fake.rateLimitNext("chat.postMessage", 1);
    const mention = fake.appMention({ channel: "C4", user: "U0ADA", text: "slow down" });
    const began = Date.now();
    await fake.sendEvent(mention);
    await fake.waitFor(() => repliesIn("C4", mention.ts as string).length === 1, 8000);
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    const posts = fake.calls("chat.postMessage").filter((c) => c.args["channel"] === "C4");
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(fake.messages("C4")).toHaveLength(1);
  });

  it("shows reconnecting then online when Slack drops or recycles the socket, and answers after it", async () => {
    for (const cut of [() => fake.disconnect("refresh_requested"), () => fake.dropConnections()]) {
      const watch = watchBridgeStates(node);
      const reconnected = fake.connected();
      cut();
      await reconnected;
      const states = await watch.until((s) => s.includes("reconnecting") && s[s.length - 1] === "online");
      watch.stop();
      expect(states.slice(states.indexOf("reconnecting"))).toEqual(["reconnecting", "online"]);
      const mention = fake.appMention({ channel: "C5", user: "U0ADA", text: `after ${fake.connections}` });
      await fake.sendEvent(mention);
      await fake.waitFor(() => repliesIn("C5", mention.ts as string).length === 1, 5000);
    }
    expect(fake.connections).toBe(3);
    expect(slackBridge(node).state).toBe("online");
  });

  it("answers an event Slack redelivers after a reconnect once", async () => {
    const mention = fake.appMention({ channel: "C6", user: "U0ADA", text: "redelivered" });
    await fake.sendEvent(mention);
    await fake.waitFor(() => repliesIn("C6", mention.ts as string).length === 1, 5000);
    const reconnected = fake.connected();
    fake.dropConnections();
    await reconnected;
    await poll(() => (slackBridge(node).state === "online" ? true : undefined), 5000, () => "online");
    await fake.sendEvent(mention, { retryAttempt: 1, retryReason: "timeout" });
    const later = fake.appMention({ channel: "C6", user: "U0ADA", text: "next" });
    await fake.sendEvent(later);
    await fake.waitFor(() => repliesIn("C6", later.ts as string).length === 1, 5000);
    expect(repliesIn("C6", mention.ts as string)).toHaveLength(1);
  });

  it("shows failed, without bringing the node down, when Slack refuses the app token on a reconnect", async () => {
    fake.failNext("apps.connections.open", "invalid_auth");
    fake.dropConnections();
    await poll(() => (slackBridge(node).state === "failed" ? true : undefined), 5000, () => `failed, not ${slackBridge(node).state}`);
    expect(slackBridge(node).lastError).toMatch(/refused SLACK_APP_TOKEN \(invalid_auth\)/);
    expect(fake.openConnections).toBe(0);
  });
});

describe("a Socket Mode reconnect that fails for another reason", () => {
  it("is reported and tried again later, not left as an unhandled rejection, until the bridge stops", async () => {
    const runtime = new BridgeRuntime({ name: "probe", type: "slack", soul: "echo", bus: node.bus, subjects: node.subjects, store: node.store, policy: DEFAULT_POLICY, report: () => undefined });
    let attempts = 0;
    const unreachable = Object.assign(new Error("connect ECONNREFUSED"), { code: "slack_webapi_request_error" });
    const socket = Object.assign(new EventEmitter(), {
      start: async () => {
        attempts++;
        throw unreachable;
      },
    });
    const watch = watchSocket(socket as never, runtime);
    await expect(socket.start()).rejects.toBe(unreachable); // the first start: the bridge's start fails with it
    watch.started();
    runtime.connected();
    socket.emit("close");
    expect(runtime.state).toBe("reconnecting");
    await expect(socket.start()).resolves.toBeUndefined(); // as the SDK's reconnect timer calls it
    expect(runtime.actor.getSnapshot().context.lastError).toMatch(/reconnecting to Slack.*ECONNREFUSED/);
    await poll(() => (attempts >= 3 ? true : undefined), 3000, () => `a retry (${attempts} attempts)`);
    watch.stopping();
    const stoppedAt = attempts;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(attempts).toBe(stoppedAt);
    await runtime.stop();
  });
});
