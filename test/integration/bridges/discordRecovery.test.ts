/**
 * The Discord bridge when things go wrong: a gateway that drops and RESUMEs (replaying a
 * MESSAGE_CREATE), a node stopped and started again on the same data with the message replayed,
 * before and after the reply was posted (the post held back at the stop never sent), and a
 * crash between a post reaching Discord and the ledger recording it (the post found on
 * Discord). Each time the user sees exactly one reply, and the machine shows the connection as
 * it was.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BridgeLedger } from "../../../bridges/core/index.ts";
import { discordNonce, type DiscordRef } from "../../../bridges/discord/index.ts";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { BRIDGE, GENERAL, botMessages, bridgeStatus, publishSpeech, replyTo, sharedBus, startDiscord, startDiscordNode } from "../../support/bridges/discordNode.ts";
import type { FakeDiscord } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let fake: FakeDiscord | undefined;
const nodes: EnsoulNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0).reverse()) await node.stop().catch(() => undefined);
  await fake?.close();
  fake = undefined;
});

async function start(data = dirs.make(), o: Parameters<typeof startDiscordNode>[2] = {}): Promise<EnsoulNode> {
  fake ??= await startDiscord();
  const node = await startDiscordNode(fake, data, o);
  nodes.push(node);
  return node;
}

const repliesTo = (f: FakeDiscord, id: string) => botMessages(f, GENERAL).filter((m) => (m.message_reference as { message_id?: string } | undefined)?.message_id === id);

/** A mention answered: what the bridge did before it in the channel has reached the fake. */
async function roundTrip(f: FakeDiscord, text = "ping"): Promise<void> {
  const sent = f.messageCreate({ content: `<@100> ${text}` });
  await replyTo(f, GENERAL, sent.id);
}

describe("the Discord bridge recovering", () => {
  it("a RESUME that replays a MESSAGE_CREATE: the replay is a duplicate, answered once", async () => {
    const node = await start();
    const f = fake!;
    const sent = f.messageCreate({ content: "<@100> only once" });
    await replyTo(f, GENERAL, sent.id);
    // The last two dispatches the client had: the user's message and the echo of the bot's reply.
    await f.dropConnection({ code: 4000, redeliver: 2 });
    await f.waitFor(() => f.resumes === 1);
    await f.waitFor(() => bridgeStatus(node).counters.duplicates === 1);
    await roundTrip(f);
    expect(repliesTo(f, sent.id)).toHaveLength(1);
    expect(f.identifies).toHaveLength(1);
    expect(bridgeStatus(node).counters).toMatchObject({ duplicates: 1, perceptions: 2 });
  });

  it("reconnecting: node.status() shows the bridge reconnecting while the gateway is away, then online", async () => {
    const node = await start();
    const f = fake!;
    const states: string[] = [];
    const sub = node.registry.subscribe((snapshot) => {
      const state = snapshot.context.bridges[BRIDGE]?.state;
      if (state && states.at(-1) !== state) states.push(state);
    });
    await f.dropConnection(4000);
    await f.waitFor(() => f.resumes === 1 && bridgeStatus(node).state === "online");
    sub.unsubscribe();
    expect(states).toEqual(["reconnecting", "online"]);
    expect(bridgeStatus(node).lastError).toMatch(/gateway connection .* was lost/);
    await roundTrip(f, "still there");
  });

  it("a node restarted on the same data after the reply, with the MESSAGE_CREATE replayed: no second reply", async () => {
    const data = dirs.make();
    const first = await start(data);
    const f = fake!;
    const sent = f.messageCreate({ content: "<@100> before the restart" });
    await replyTo(f, GENERAL, sent.id);
    await first.stop();
    expect(f.liveConnections).toBe(0);

    const second = await start(data);
    f.dispatch("MESSAGE_CREATE", sent);
    await f.waitFor(() => bridgeStatus(second).counters.duplicates === 1);
    await roundTrip(f, "after the restart");
    expect(repliesTo(f, sent.id)).toHaveLength(1);
  });

  it("a node stopped after taking the message but before its reply was posted: the next start posts it, once", async () => {
    // The bus outlives the nodes as NATS would: the in-process bus keeps the speech only while it lives.
    const bus = sharedBus();
    try {
      const data = dirs.make();
      const first = await start(data, { bus });
      const f = fake!;
      // Discord holds the reply back (a 429 of 2 s): the node stops while the post waits.
      f.rateLimitNext("POST /channels/300/messages", 2, 1);
      const sent = f.messageCreate({ content: "<@100> across the stop" });
      await f.waitFor(() => f.calls("POST /channels/300/messages").some((c) => c.status === 429));
      await first.stop();
      expect(repliesTo(f, sent.id)).toHaveLength(0);

      const second = await start(data, { bus });
      const reply = await replyTo(f, GENERAL, sent.id);
      expect(reply.content).toBe("echo: across the stop");
      f.dispatch("MESSAGE_CREATE", sent);
      await f.waitFor(() => bridgeStatus(second).counters.duplicates === 1);
      // The stopped node's held-back post was aborted with its stop: past the 429's 2 s (with a wide margin), it never came.
      const limited = f.calls("POST /channels/300/messages").find((c) => c.status === 429)!;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, limited.at + 3000 - Date.now())));
      const replies = f.calls("POST /channels/300/messages").filter((c) => (c.body as { message_reference?: { message_id?: string } }).message_reference?.message_id === sent.id);
      expect(replies.map((c) => c.status)).toEqual([429, 200]);
      await roundTrip(f, "after it");
      expect(repliesTo(f, sent.id)).toHaveLength(1);
    } finally {
      for (const node of nodes.splice(0).reverse()) await node.stop().catch(() => undefined);
      await bus.close();
    }
  });

  it("a crash between the post and its ledger record: the bridge finds the message on Discord and does not post it again", async () => {
    const node = await start();
    const f = fake!;
    const sent = f.messageCreate({ content: "<@100> crash test" });
    await replyTo(f, GENERAL, sent.id);

    // What a crash leaves: the ledger's intent without a reference, and the message on Discord.
    const speechId = "crash-speech-1";
    const text = "posted just before the crash";
    const ledger = new BridgeLedger(node.store, `bridge-${BRIDGE}`);
    await ledger.recordPost(speechId, 0, { shown: text, at: Date.now() });
    const res = await fetch(`${f.apiUrl}/v10/channels/${GENERAL}/messages`, {
      method: "POST",
      headers: { Authorization: `Bot ${f.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ content: text, nonce: discordNonce(speechId, 0, sent.id), enforce_nonce: true, message_reference: { message_id: sent.id } }),
    });
    const before = (await res.json()) as { id: string };

    // The speech delivered again after the restart.
    await publishSpeech(node, { proposalId: speechId, text, final: true, perception: `discord:${sent.id}` });
    const ref = await f.waitFor(() => ledger.post(speechId, 0)?.ref as DiscordRef | undefined);
    expect(ref).toMatchObject({ channel: GENERAL, id: before.id });
    expect(f.messages(GENERAL).filter((m) => m.content === text)).toHaveLength(1);
    // Only the post the crash left: the bridge read the channel and found it.
    const posts = f.calls("POST /channels/300/messages").filter((c) => (c.body as { nonce?: string }).nonce === discordNonce(speechId, 0, sent.id));
    expect(posts.map((c) => c.status)).toEqual([200]);
    expect(f.calls(`GET /channels/${GENERAL}/messages`).length).toBeGreaterThanOrEqual(1);
    expect(bridgeStatus(node).counters.recovered).toBe(1);
  });
});
