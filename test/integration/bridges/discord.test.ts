/**
 * The Discord bridge end to end: a real node (in-process bus, real LMDB) hosting the echo soul,
 * its Discord bridge running the real discord.js against the fake Discord. What a user types
 * in a channel, a thread or a DM becomes a perception per the policy, and the soul's answer
 * shows once, as a reply, in the right place.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, type MentalProcess } from "../../../actors/soul/index.ts";
import { decodeEnvelope, isKind, type Envelope } from "../../../runtime/bus/index.ts";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { discordNonce } from "../../../bridges/discord/index.ts";
import { BRIDGE, GENERAL, OTHER_THREAD, THREAD, botMessages, bridgeStatus, publishSpeech, replyTo, startDiscord, startDiscordNode, watchEvents } from "../../support/bridges/discordNode.ts";
import type { FakeDiscord } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const mention = (text: string) => `<@100> ${text}`;

describe("the Discord bridge", () => {
  let fake: FakeDiscord;
  let node: EnsoulNode;

  beforeAll(async () => {
    fake = await startDiscord();
    node = await startDiscordNode(fake, dirs.make());
  });
  afterAll(async () => {
    await node?.stop();
    await fake?.close();
  });

  /** A mention answered, so anything the bridge did before it in the channel has reached the fake. */
  async function roundTrip(channel = GENERAL): Promise<void> {
    const sent = fake.messageCreate({ channel_id: channel, content: mention("ping") });
    await replyTo(fake, channel, sent.id);
  }

  it("logs in with the four intents, is online, and posts nothing on its own", () => {
    expect(fake.identifies).toHaveLength(1);
    expect(fake.identifies[0].intents).toBe((1 << 0) | (1 << 9) | (1 << 15) | (1 << 12));
    expect(bridgeStatus(node)).toMatchObject({ name: BRIDGE, type: "discord", soul: "echo", state: "online" });
    expect(botMessages(fake, GENERAL)).toHaveLength(0);
  });

  it("a mention becomes a perception and its answer shows once, as a reply in the channel, with typing while the soul thinks", async () => {
    const perceptions: Envelope<"perception">[] = [];
    const sub = node.bus.subscribe(node.subjects.perceive("echo"), (msg) => {
      const decoded = decodeEnvelope(msg.data);
      if (decoded.ok && isKind(decoded.envelope, "perception")) perceptions.push(decoded.envelope);
    });
    const sent = fake.messageCreate({ channel_id: GENERAL, author: "400", content: mention("hello there") });
    const reply = await replyTo(fake, GENERAL, sent.id);
    sub.unsubscribe();

    expect(reply.content).toBe("echo: hello there");
    expect(reply.type).toBe(19);
    expect(reply.message_reference).toMatchObject({ message_id: sent.id, channel_id: GENERAL });
    expect(fake.typing(GENERAL)).toBeGreaterThanOrEqual(1);
    const post = fake.calls("POST /channels/300/messages").find((c) => (c.body as { content?: string }).content === "echo: hello there")!;
    expect(post.body).toMatchObject({ enforce_nonce: true, message_reference: { message_id: sent.id, fail_if_not_exists: false }, allowed_mentions: { parse: [] } });
    expect(String((post.body as { nonce: string }).nonce).length).toBeLessThanOrEqual(25);

    const perception = perceptions.find((p) => p.id === `discord:${sent.id}`)!;
    expect(perception.body).toMatchObject({ action: "said", content: "hello there", name: "Alice" });
    expect(perception.body.meta).toMatchObject({ platform: "discord", channel: GENERAL, messageId: sent.id, userId: "400", direct: false });

    await roundTrip();
    expect(botMessages(fake, GENERAL).filter((m) => (m.message_reference as { message_id?: string } | undefined)?.message_id === sent.id)).toHaveLength(1);
  });

  it("strips the nickname form of the mention <@!id> too", async () => {
    const sent = fake.messageCreate({ content: "<@!100>   hi   <@!100>" });
    expect((await replyTo(fake, GENERAL, sent.id)).content).toBe("echo: hi");
  });

  it("answers a direct message in its DM channel, without a mention", async () => {
    const sent = fake.messageCreate({ dm: true, author: "401", content: "psst" });
    const dm = fake.dmChannelId("401");
    const reply = await replyTo(fake, dm, sent.id);
    expect(reply.content).toBe("echo: psst");
    expect(reply.channel_id).toBe(dm);
    expect(botMessages(fake, GENERAL).some((m) => m.content === "echo: psst")).toBe(false);
  });

  it("ignores a channel message without a mention, with a bridge.ignored event saying why", async () => {
    const watch = await watchEvents(node);
    const sent = fake.messageCreate({ content: "just chatting" });
    const ignored = await fake.waitFor(() => watch.events.find((e) => e.type === "bridge.ignored" && (e.data as { messageId?: string }).messageId === sent.id));
    watch.stop();
    expect(ignored.data).toMatchObject({ bridge: BRIDGE, platform: "discord", channel: GENERAL, userId: "400", reason: "the soul is not mentioned (policy.reply is mentions)" });
    await roundTrip();
    expect(botMessages(fake, GENERAL).some((m) => m.content.includes("just chatting"))).toBe(false);
    expect(bridgeStatus(node).counters.ignored).toBeGreaterThanOrEqual(1);
  });

  it("ignores bots, even when they mention the soul, and its own messages without an event", async () => {
    const watch = await watchEvents(node);
    const sent = fake.messageCreate({ author: { id: "500", username: "otherbot", bot: true }, content: mention("hi bot") });
    const ignored = await fake.waitFor(() => watch.events.find((e) => e.type === "bridge.ignored" && (e.data as { messageId?: string }).messageId === sent.id));
    expect((ignored.data as { reason: string }).reason).toBe("the message is from a bot");
    await roundTrip();
    watch.stop();
    expect(botMessages(fake, GENERAL).some((m) => m.content.includes("hi bot"))).toBe(false);
    // The bot's own reply came back on the gateway (Discord echoes it) and made no event.
    const own = new Set(botMessages(fake, GENERAL).map((m) => m.id));
    expect(watch.events.filter((e) => own.has((e.data as { messageId?: string }).messageId ?? ""))).toEqual([]);
  });

  it("answers in a thread, then follows up there without a mention; a thread it never spoke in needs one", async () => {
    const first = fake.messageCreate({ channel_id: THREAD, content: mention("in the thread") });
    const reply = await replyTo(fake, THREAD, first.id);
    expect(reply).toMatchObject({ content: "echo: in the thread", channel_id: THREAD });

    const followUp = fake.messageCreate({ channel_id: THREAD, author: "401", content: "and a follow-up" });
    expect((await replyTo(fake, THREAD, followUp.id)).content).toBe("echo: and a follow-up");

    const watch = await watchEvents(node);
    const elsewhere = fake.messageCreate({ channel_id: OTHER_THREAD, content: "no mention here" });
    const ignored = await fake.waitFor(() => watch.events.find((e) => (e.data as { messageId?: string } | undefined)?.messageId === elsewhere.id));
    watch.stop();
    expect(ignored.data).toMatchObject({ thread: OTHER_THREAD, reason: "the soul is not mentioned (policy.reply is mentions)" });
  });

  it("a 429 on the reply is waited out: the answer still shows exactly once", async () => {
    const since = Date.now();
    fake.rateLimitNext("POST /channels/300/messages", 0.3, 1);
    const sent = fake.messageCreate({ content: mention("patience") });
    const reply = await replyTo(fake, GENERAL, sent.id);
    expect(reply.content).toBe("echo: patience");
    const posts = await fake.waitFor(() => {
      const made = fake.calls("POST /channels/300/messages").filter((c) => c.at >= since);
      return made.every((c) => c.status !== 0) && made;
    });
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    await roundTrip();
    expect(botMessages(fake, GENERAL).filter((m) => m.content === "echo: patience")).toHaveLength(1);
  });

  it("streams: the first piece is posted, later pieces edit that one message, the final replaces it", async () => {
    const sent = fake.messageCreate({ channel_id: OTHER_THREAD, content: mention("stream to me") });
    await replyTo(fake, OTHER_THREAD, sent.id);
    const perception = `discord:${sent.id}`;
    await publishSpeech(node, { proposalId: "stream-1", text: "Once upon", final: false, chunk: 0, perception });
    const draft = await fake.waitFor(() => botMessages(fake, OTHER_THREAD).find((m) => m.content === "Once upon"));
    await publishSpeech(node, { proposalId: "stream-1", text: " a time", final: false, chunk: 1, perception });
    await publishSpeech(node, { proposalId: "stream-1", text: "Once upon a time, the end.", final: true, perception });
    await fake.waitFor(() => fake.messages(OTHER_THREAD).find((m) => m.id === draft.id && m.content === "Once upon a time, the end."));
    expect(botMessages(fake, OTHER_THREAD).filter((m) => m.content.startsWith("Once upon"))).toHaveLength(1);
    expect(fake.calls(`PATCH /channels/${OTHER_THREAD}/messages/${draft.id}`).length).toBeGreaterThanOrEqual(1);
    expect(fake.messages(OTHER_THREAD).find((m) => m.id === draft.id)?.nonce).toBe(discordNonce("stream-1", 0, sent.id));
  });

  it("a daimon's words are the bot's, with a bold prefix naming the daimon", async () => {
    const sent = fake.messageCreate({ content: mention("what does the muse say?") });
    await replyTo(fake, GENERAL, sent.id);
    await publishSpeech(node, { from: "daimon-muse", proposalId: "muse-1", text: "Look closer.", final: true, perception: `discord:${sent.id}` });
    const said = await fake.waitFor(() => botMessages(fake, GENERAL).find((m) => m.content.endsWith("Look closer.")));
    expect(said.content).toBe("**muse:** Look closer.");
    expect(said.message_reference).toMatchObject({ message_id: sent.id });
  });
});

describe("the Discord bridge with a long answer", () => {
  const prose = "The answer begins with some prose. ".repeat(40).trim();
  const code = Array.from({ length: 70 }, (_, i) => `const line${String(i).padStart(2, "0")} = "${"x".repeat(20)}";`).join("\n");
  const long = `${prose}\n\n\`\`\`ts\n${code}\n\`\`\`\n\nAnd that is all.`;
  const speaker: MentalProcess = async ({ workingMemory }) => {
    useActions().speak(long);
    return workingMemory;
  };
  const blueprint = defineSoul({ name: "Verbose", persona: "Says a lot, with code.", initialProcess: speaker, processes: { speaker } });
  let fake: FakeDiscord;
  let node: EnsoulNode;

  beforeAll(async () => {
    fake = await startDiscord();
    node = await startDiscordNode(fake, dirs.make(), { blueprint });
  });
  afterAll(async () => {
    await node?.stop();
    await fake?.close();
  });

  it("splits at 2,000 characters without breaking the code fence: each message renders on its own", async () => {
    expect(long.length).toBeGreaterThan(3000);
    const sent = fake.messageCreate({ content: mention("explain") });
    const parts = await fake.waitFor(() => {
      const mine = botMessages(fake, GENERAL);
      return mine.some((m) => m.content.includes("And that is all.")) ? mine : undefined;
    }, 10_000);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const part of parts) {
      expect(part.content.length).toBeLessThanOrEqual(2000);
      expect(part.content.split("\n").filter((line) => line.startsWith("```")).length % 2).toBe(0);
    }
    // The first piece answers the message; the rest continue it, each posted with its own nonce.
    expect(parts[0].message_reference).toMatchObject({ message_id: sent.id });
    expect(parts.slice(1).every((p) => p.message_reference === undefined)).toBe(true);
    expect(new Set(parts.map((p) => p.nonce)).size).toBe(parts.length);
    const reopened = parts.slice(1).find((p) => p.content.startsWith("```ts\n"));
    expect(reopened).toBeDefined();
    const all = parts.map((p) => p.content).join("\n");
    for (let i = 0; i < 70; i++) expect(all).toContain(`const line${String(i).padStart(2, "0")} =`);
    expect(all).toContain(prose.slice(0, 200));
  });
});
