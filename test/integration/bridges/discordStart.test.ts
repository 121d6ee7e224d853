/**
 * The Discord bridge's start, options and stop: what it needs from the environment (and says
 * so when it is missing), a token or intents Discord refuses (the bridge stops the node's
 * start, or, marked optional, fails while the node runs on; the token is never printed), the
 * policy and `daimonWebhooks` options, and a stop that leaves no gateway connection behind.
 */
import { afterEach, afterAll, describe, expect, it, vi } from "vitest";
import { discordNonce, parseDiscordOptions, TypingIndicator, TYPING_REPEAT_MS } from "../../../bridges/discord/index.ts";
import { createLogger } from "../../../runtime/log/index.ts";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { GENERAL, botMessages, bridgeStatus, publishSpeech, replyTo, startDiscord, startDiscordNode, watchEvents, type DiscordNodeOptions } from "../../support/bridges/discordNode.ts";
import { Intents, startFakeDiscord, type FakeDiscord } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let fake: FakeDiscord | undefined;
let node: EnsoulNode | undefined;
afterEach(async () => {
  await node?.stop().catch(() => undefined);
  await fake?.close();
  node = undefined;
  fake = undefined;
});

async function start(o: DiscordNodeOptions & { fake?: FakeDiscord } = {}): Promise<{ node: EnsoulNode; fake: FakeDiscord; logs: string[] }> {
  fake = o.fake ?? (await startDiscord());
  const logs: string[] = [];
  node = await startDiscordNode(fake, dirs.make(), { ...o, log: (line) => logs.push(line) });
  return { node, fake, logs };
}

/** The error the node's start rejects with, the bridge not being optional. */
async function startError(o: DiscordNodeOptions & { fake?: FakeDiscord } = {}): Promise<{ error: string; logs: string[]; fake: FakeDiscord }> {
  const f = (fake = o.fake ?? (await startDiscord()));
  const logs: string[] = [];
  const error = await startDiscordNode(f, dirs.make(), { ...o, log: (line) => logs.push(line) }).then(
    (started) => ((node = started), new Error("the node started")),
    (err: unknown) => err as Error,
  );
  return { error: error.message, logs, fake: f };
}

describe("the Discord bridge's start", () => {
  it("without DISCORD_TOKEN it stops the node's start, saying which variable to set; marked optional, the node runs on", async () => {
    expect((await startError({ env: {} })).error).toMatch(/^bridge discord-echo \(discord, soul echo\) cannot start: .*DISCORD_TOKEN/);
    const { node } = await start({ env: {}, optional: true });
    expect(bridgeStatus(node)).toMatchObject({ state: "failed", lastError: expect.stringContaining("DISCORD_TOKEN") });
    expect(node.status().state).toBe("running");
  });

  it("a DISCORD_API_URL that is not a URL is named", async () => {
    expect((await startError({ env: { DISCORD_TOKEN: "t", DISCORD_API_URL: "not a url" } })).error).toMatch(/DISCORD_API_URL is not a URL/);
  });

  it("a DISCORD_API_URL that names the API version is refused, saying it is the base without it (discord.js appends /v10)", async () => {
    const f = await startDiscord();
    const { error } = await startError({ fake: f, env: { DISCORD_TOKEN: f.token, DISCORD_API_URL: `${f.apiUrl}/v10` } });
    expect(error).toMatch(/DISCORD_API_URL .*without the version.*\/v10/);
    expect(f.calls()).toEqual([]);
  });

  it("logs its start-up line, with the bot's name and the REST base, through the node's log at info (it is not a warning)", async () => {
    fake = await startDiscord();
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger({ level: "debug", format: "json", target: { write: (json: string) => void lines.push(JSON.parse(json) as { level: string; msg: string }) } });
    node = await startDiscordNode(fake, dirs.make(), { logger });
    const line = lines.find((l) => l.msg.startsWith("discord bridge discord-echo:"));
    expect(line).toEqual(expect.objectContaining({ level: "info", msg: `discord bridge discord-echo: soul echo as @ensoul (REST ${fake.apiUrl})` }));
  });

  it("a token Discord refuses stops the start (never printing it), and leaves no gateway connection", async () => {
    const secret = "not-the-right-token-4f9c";
    const f = await startDiscord();
    const { error, logs } = await startError({ fake: f, env: { DISCORD_TOKEN: secret, DISCORD_API_URL: f.apiUrl } });
    expect(error).toMatch(/invalid token/i);
    expect(f.calls("GET /gateway/bot")[0].status).toBe(401);
    expect(JSON.stringify([logs, error])).not.toContain(secret);
    expect(f.liveConnections).toBe(0);
    // Marked optional: the same failure shows in the node's status, the token still never printed.
    const { node, logs: optionalLogs } = await start({ fake: f, optional: true, env: { DISCORD_TOKEN: secret, DISCORD_API_URL: f.apiUrl } });
    expect(bridgeStatus(node)).toMatchObject({ state: "failed", lastError: expect.stringMatching(/invalid token/i) });
    expect(JSON.stringify([optionalLogs, node.status()])).not.toContain(secret);
  });

  it("intents Discord does not allow (4014) stop the start with discord.js's reason", async () => {
    const f = await startFakeDiscord({ heartbeatIntervalMs: 1000, disallowedIntents: Intents.MessageContent });
    expect((await startError({ fake: f })).error).toMatch(/disallowed intents/i);
  });

  it("unknown options are refused with the option's name", async () => {
    expect((await startError({ options: { replyTo: "all" } })).error).toMatch(/discord bridge options.*replyTo/s);
    expect(() => parseDiscordOptions({ daimonWebhooks: "yes" })).toThrow(/daimonWebhooks/);
    expect(parseDiscordOptions(undefined)).toEqual({ daimonWebhooks: false });
  });

  it("nonces are at most 25 characters, the same for the same speech part and message, different otherwise", () => {
    const nonces = ["echo:1:0", "echo:2:0", "01JABCDEFGHJKMNPQRSTVWXYZ0-0-final"].flatMap((id) => [0, 1, 2].flatMap((part) => ["1575222463220940800", "1575222463220940801"].map((m) => discordNonce(id, part, m))));
    expect(nonces.every((n) => n.length <= 25 && /^[0-9a-z]+$/.test(n))).toBe(true);
    expect(new Set(nonces).size).toBe(nonces.length);
    expect(discordNonce("echo:1:0", 1, "42")).toBe(discordNonce("echo:1:0", 1, "42"));
  });

  it("typing repeats every 8 s while any message in the channel is thought about, and stops with the last", async () => {
    vi.useFakeTimers();
    try {
      const sent: string[] = [];
      const typing = new TypingIndicator(async (channel) => void sent.push(channel), () => undefined);
      await typing.start("c1");
      await typing.start("c1");
      expect(sent).toEqual(["c1"]);
      await vi.advanceTimersByTimeAsync(TYPING_REPEAT_MS * 2);
      expect(sent).toHaveLength(3);
      typing.stop("c1");
      await vi.advanceTimersByTimeAsync(TYPING_REPEAT_MS);
      expect(sent).toHaveLength(4);
      typing.stop("c1");
      await vi.advanceTimersByTimeAsync(TYPING_REPEAT_MS * 3);
      expect(sent).toHaveLength(4);
      expect(TYPING_REPEAT_MS).toBeLessThan(10_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it("stop destroys the client: no gateway connection left, the bridge stopped", async () => {
    const { node, fake: f } = await start();
    expect(f.liveConnections).toBe(1);
    await node.stop();
    expect(f.liveConnections).toBe(0);
    expect(bridgeStatus(node).state).toBe("stopped");
  });
});

describe("the Discord bridge's options", () => {
  it("policy: reply to all channel messages, but not to DMs (an event says why)", async () => {
    const { node, fake: f } = await start({ options: { policy: { reply: "all", dms: false } } });
    const sent = f.messageCreate({ content: "no mention needed" });
    expect((await replyTo(f, GENERAL, sent.id)).content).toBe("echo: no mention needed");
    const watch = await watchEvents(node);
    const dm = f.messageCreate({ dm: true, content: "hello?" });
    const ignored = await f.waitFor(() => watch.events.find((e) => (e.data as { messageId?: string } | undefined)?.messageId === dm.id));
    watch.stop();
    expect((ignored.data as { reason: string }).reason).toBe("direct messages are off (policy.dms)");
  });

  it("daimonWebhooks: a daimon speaks through a channel webhook under its own name, streamed by editing, and its echo is not perceived", async () => {
    const { node, fake: f } = await start({ options: { name: "discord-echo", daimonWebhooks: true } });
    const sent = f.messageCreate({ content: "<@100> muse?" });
    await replyTo(f, GENERAL, sent.id);
    const received = bridgeStatus(node).counters.received;
    const perception = `discord:${sent.id}`;

    await publishSpeech(node, { from: "daimon-muse", proposalId: "muse-2", text: "Look", final: false, chunk: 0, perception });
    const draft = await f.waitFor(() => f.webhookMessages().find((m) => m.content === "Look"));
    await publishSpeech(node, { from: "daimon-muse", proposalId: "muse-2", text: "Look closer, there.", final: true, perception });
    await f.waitFor(() => f.webhookMessages().find((m) => m.id === draft.id && m.content === "Look closer, there."));

    expect(f.webhookMessages()).toHaveLength(1);
    expect(draft.webhook?.username).toBe("muse");
    expect(draft.channel_id).toBe(GENERAL);
    expect(f.calls("POST /channels/300/webhooks")).toHaveLength(1);
    expect(f.calls("PATCH /webhooks/:id/:token/messages/:mid").length).toBeGreaterThanOrEqual(1);
    expect(botMessages(f, GENERAL).some((m) => m.content.includes("Look"))).toBe(false);
    // Its echo (MESSAGE_CREATE, then MESSAGE_UPDATE) is the bridge's own: not a message taken.
    const later = f.messageCreate({ content: "<@100> after the muse" });
    await replyTo(f, GENERAL, later.id);
    expect(bridgeStatus(node).counters.received).toBe(received + 1);

    // A DM has no webhooks: there the bot says the daimon's words, prefixed.
    const dm = f.messageCreate({ dm: true, author: "401", content: "muse, in private?" });
    const dmChannel = f.dmChannelId("401");
    await replyTo(f, dmChannel, dm.id);
    await publishSpeech(node, { from: "daimon-muse", proposalId: "muse-dm", text: "Quietly.", final: true, perception: `discord:${dm.id}` });
    expect((await f.waitFor(() => botMessages(f, dmChannel).find((m) => m.content.endsWith("Quietly.")))).content).toBe("**muse:** Quietly.");

    // Another start finds the bot's webhook in the channel instead of making another.
    await node.stop();
    const again = await startDiscordNode(f, dirs.make(), { options: { daimonWebhooks: true } });
    try {
      const next = f.messageCreate({ content: "<@100> muse again?" });
      // Its first reply has the speech id the first node's first reply had (echo:1:0): the nonce keeps them apart.
      expect((await replyTo(f, GENERAL, next.id)).content).toBe("echo: muse again?");
      await publishSpeech(again, { from: "daimon-muse", proposalId: "muse-3", text: "Again.", final: true, perception: `discord:${next.id}` });
      await f.waitFor(() => f.webhookMessages().find((m) => m.content === "Again."));
      expect(f.calls("POST /channels/300/webhooks")).toHaveLength(1);
    } finally {
      await again.stop();
    }
  });
});
