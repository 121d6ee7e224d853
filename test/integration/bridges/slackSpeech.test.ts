/**
 * What the Slack bridge posts, against the fake Slack with a real node: long speech split at
 * Slack's limit with code fences kept whole, streamed speech as one message edited, a post made
 * just before a crash found again by its metadata instead of made twice, a daimon under its own
 * name, and an event left unacknowledged (so Slack retries) when the bridge could not take it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webApi } from "@slack/bolt";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { BridgeLedger, type Conversation } from "../../../bridges/core/index.ts";
import { SlackOutlet, startSlackBridge } from "../../../bridges/slack/index.ts";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { SIGNING_SECRET, slackBridge, slackEnv, startSlackNode, watchSubject } from "../../support/bridges/slackNode.ts";
import { startFakeSlack, type FakeSlack } from "../../support/fakes/slack/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const CODE = Array.from({ length: 160 }, (_, i) => `const line${String(i).padStart(3, "0")} = "${"x".repeat(24)}";`).join("\n");
const LONG = `Here is the whole file.\n\n\`\`\`ts\n${CODE}\n\`\`\`\n\nThat is all of it.`;

async function* pieces(): AsyncIterable<string> {
  for (const piece of ["one ", "two ", "three"]) {
    await new Promise((resolve) => setTimeout(resolve, 30));
    yield piece;
  }
}

/** `long`: a text of about 6,500 characters with one code block; `stream`: three pieces; else `echo: <content>`. */
const speaker: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  const actions = useActions();
  if (content === "long") actions.speak(LONG);
  else if (content === "stream") actions.speak(pieces());
  else actions.speak(`echo: ${content}`);
  return workingMemory;
};
const speakerSoul = defineSoul({ name: "Speaker", persona: "Says long things, streams, and echoes.", initialProcess: speaker, processes: { speaker } });

const dirs = tempDirs();
let fake: FakeSlack;
let node: EnsoulNode;

beforeAll(async () => {
  fake = await startFakeSlack({ users: { U0ADA: { name: "ada" } } });
  node = await startSlackNode(fake, { data: dirs.make(), soul: speakerSoul });
});

afterAll(async () => {
  await node?.stop();
  await fake?.close();
  dirs.cleanup();
});

const repliesIn = (channel: string, thread: string) => fake.messages(channel).filter((m) => m.thread_ts === thread);
const settled = (channel: string, ts: string) => fake.waitFor((s) => s.calls("reactions.remove").some((c) => c.args["channel"] === channel && c.args["timestamp"] === ts), 8000);
const fences = (text: string) => text.split("\n").filter((line) => line.startsWith("```")).length;

describe("the Slack bridge's speech", () => {
  // The first turns on a fresh data dir: the recovery test names its speech ids before they are spoken.
  it("finds a post made before a crash by its metadata, and posts nothing twice", async () => {
    const turns = watchSubject(node, node.subjects.events("echo"));
    const web = new webApi.WebClient(fake.identity.botToken, { slackApiUrl: fake.apiUrl });
    const ledger = new BridgeLedger(node.store, "bridge-slack-echo");
    const cases = [
      { speechId: "echo:1:0", text: "crash", shownBefore: "echo: crash" },
      // Cut off mid-stream: the post is there with part of the text, and is completed by an edit.
      { speechId: "echo:2:0", text: "cut short", shownBefore: "echo: cut" },
    ];
    for (const c of cases) {
      const mention = fake.appMention({ channel: "C9", user: "U0ADA", text: c.text });
      const ts = mention.ts as string;
      fake.eventCallback(mention); // Slack has the person's message before the crash.
      const lost = await web.chat.postMessage({ channel: "C9", thread_ts: ts, text: c.shownBefore, metadata: { event_type: "ensoul_speech", event_payload: { speech_id: c.speechId, part: 0 } } });
      await ledger.recordPost(c.speechId, 0, { shown: c.shownBefore, at: Date.now() });
      const postsBefore = fake.calls("chat.postMessage").length;
      await fake.sendEvent(mention);
      await settled("C9", ts);
      expect(fake.calls("chat.postMessage")).toHaveLength(postsBefore);
      expect(repliesIn("C9", ts).map((m) => [m.ts, m.text])).toEqual([[lost.ts, `echo: ${c.text}`]]);
      expect(ledger.post(c.speechId, 0)).toMatchObject({ ref: { channel: "C9", id: lost.ts }, shown: `echo: ${c.text}` });
    }
    turns.stop();
    const spoken = turns.seen.flatMap((e) => (e.kind === "event" && e.body.type === "soul.turn" ? ((e.body.data as { speech?: string[] }).speech ?? []) : []));
    expect(spoken, "the turns' speech ids, as the test expected them").toEqual(["echo:1:0", "echo:2:0"]);
    expect(slackBridge(node).counters).toMatchObject({ recovered: 2, posted: 0 });
    expect(fake.calls("chat.update").map((c) => c.args["text"])).toEqual(["echo: cut short"]);
  });

  it("splits long speech at Slack's limit without breaking the code block", async () => {
    const mention = fake.appMention({ channel: "C1", user: "U0ADA", text: "long" });
    await fake.sendEvent(mention);
    await settled("C1", mention.ts as string);
    const parts = repliesIn("C1", mention.ts as string);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts.map((m) => m.metadata?.event_payload["part"])).toEqual(parts.map((_, i) => i));
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(4000);
      expect(fences(part.text) % 2, part.text.slice(0, 80)).toBe(0);
    }
    const all = parts.map((m) => m.text).join("\n");
    for (const line of CODE.split("\n")) expect(all).toContain(line);
    expect(parts[0]?.text.startsWith("Here is the whole file.")).toBe(true);
    expect(parts[parts.length - 1]?.text.endsWith("That is all of it.")).toBe(true);
  });

  it("streams speech into one message, edited to the final text", async () => {
    const mention = fake.appMention({ channel: "C2", user: "U0ADA", text: "stream" });
    await fake.sendEvent(mention);
    await settled("C2", mention.ts as string);
    const [reply, ...more] = repliesIn("C2", mention.ts as string);
    expect(more).toEqual([]);
    expect(reply?.text).toBe("one two three");
    expect(reply?.edits.length).toBeGreaterThanOrEqual(1);
    expect(fake.calls("chat.postMessage").filter((c) => c.args["channel"] === "C2")).toHaveLength(1);
  });

  it("posts a daimon's words under its own name and icon, escaped, and finds them again", async () => {
    const web = new webApi.WebClient(fake.identity.botToken, { slackApiUrl: fake.apiUrl });
    const outlet = new SlackOutlet(web, { teamId: "T0001", team: "Fake Team", botUserId: "U0BOT", botId: "B0BOT", botName: "fakebot" }, { daimonIcon: ":crystal_ball:" });
    const root = fake.appMention({ channel: "C3", user: "U0ADA", text: "hi" });
    fake.eventCallback(root);
    const conversation: Conversation = { platform: "slack", channel: "C3", messageId: root.ts as string, direct: false };
    const key = { speechId: "echo:99:0", part: 0, speaker: { kind: "daimon" as const, name: "Oracle" } };
    const ref = await outlet.post(conversation, "beware <!channel> & <@U0ADA>", key);
    expect(fake.messages("C3")[0]).toMatchObject({ username: "Oracle", icon_emoji: ":crystal_ball:", thread_ts: root.ts, text: "beware &lt;!channel&gt; &amp; &lt;@U0ADA&gt;" });
    expect(await outlet.find(conversation, key)).toEqual(ref);
    expect(await outlet.find(conversation, { ...key, part: 1 })).toBeUndefined();
  });
});

describe("an event the bridge cannot take", () => {
  it("is left unacknowledged over Socket Mode and answered 500 over HTTP, so Slack delivers it again", async () => {
    const other = await startFakeSlack();
    const bridge = (options: Record<string, unknown>) =>
      startSlackBridge({
        entry: { type: "slack", soul: "echo", options },
        name: `probe-${String(options["mode"])}`,
        bus: node.bus,
        subjects: node.subjects,
        store: node.store,
        env: slackEnv(other),
        soulName: "Speaker",
        report: () => undefined,
        log: () => undefined,
        info: () => undefined,
      });
    const socket = await bridge({ mode: "socket" });
    const http = await bridge({ mode: "events", port: 0 });
    try {
      socket.runtime.closeIntake();
      http.runtime.closeIntake();
      await expect(other.sendEvent(other.appMention({ channel: "C1", text: "refused" }), { timeoutMs: 500 })).rejects.toThrow(/not acked/);
      const res = await other.postSignedEvent(http.status().url ?? "", other.appMention({ channel: "C1", text: "refused" }), { signingSecret: SIGNING_SECRET });
      expect(res.status).toBe(500);
      expect(other.messages()).toEqual([]);
    } finally {
      await socket.stop();
      await http.stop();
      await other.close();
    }
  });
});
