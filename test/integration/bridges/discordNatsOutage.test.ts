/**
 * The Discord bridge across a NATS outage, on a real nats-server stopped for 10 s and started
 * again on the same port with its store. Discord never sends a message again, so a message
 * whose perception the bus could not store (the outage outlasts the bus's publish deadline,
 * 1 s here, 60 s by default) is published again by the bridge, with backoff, while the node
 * runs: the person is answered once NATS is back, without a restart, and a message sent after
 * it is answered after it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Bus } from "../../../runtime/bus/index.ts";
import { connectClusterBus, type EnsoulNode } from "../../../runtime/node/index.ts";
import { CLUSTER, GENERAL, botMessages, bridgeStatus, replyTo, startDiscord, startDiscordNode } from "../../support/bridges/discordNode.ts";
import type { FakeDiscord } from "../../support/fakes/discord/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const OUTAGE_MS = 10_000;

describeWithNats("the Discord bridge across a NATS outage", () => {
  const dirs = tempDirs();
  let server: NatsServerHandle;
  let bus: Bus;
  let fake: FakeDiscord;
  let node: EnsoulNode;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    // The bus gives up on a publish after 1 s: the outage outlasts it, as a long one outlasts the default 60 s.
    bus = await connectClusterBus({ servers: server.url, cluster: CLUSTER, reconnectTimeWaitMs: 100, publishTimeoutMs: 1000 });
    fake = await startDiscord();
    node = await startDiscordNode(fake, dirs.make(), { bus });
  });
  afterAll(async () => {
    await node?.stop().catch(() => undefined);
    await bus?.close().catch(() => undefined);
    await fake?.close();
    await server?.dispose();
    dirs.cleanup();
  });

  it("a message taken while NATS is stopped for 10 s is answered once NATS is back, while the node runs, and the one after it after it", async () => {
    const before = fake.messageCreate({ content: "<@100> before the outage" });
    await replyTo(fake, GENERAL, before.id);

    await server.stop();
    const stoppedAt = Date.now();
    const first = fake.messageCreate({ content: "<@100> while NATS is away" });
    // Its publish failed (the bus gave up on it): the bridge says so and keeps it.
    await fake.waitFor(() => /perceive failed/.test(bridgeStatus(node).lastError ?? ""), 5_000);
    const second = fake.messageCreate({ content: "<@100> and one more" });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt))));
    expect(botMessages(fake, GENERAL).filter((m) => m.content !== "echo: before the outage")).toEqual([]);
    await server.restart();

    const answerFirst = await replyTo(fake, GENERAL, first.id, 40_000);
    const answerSecond = await replyTo(fake, GENERAL, second.id, 20_000);
    expect([answerFirst.content, answerSecond.content]).toEqual(["echo: while NATS is away", "echo: and one more"]);
    // In the order they were typed, each once.
    expect(BigInt(answerFirst.id) < BigInt(answerSecond.id)).toBe(true);
    const after = fake.messageCreate({ content: "<@100> after it" });
    await replyTo(fake, GENERAL, after.id);
    for (const sent of [first, second]) {
      expect(botMessages(fake, GENERAL).filter((m) => (m.message_reference as { message_id?: string } | undefined)?.message_id === sent.id)).toHaveLength(1);
    }
    expect(node.status().state).toBe("running");
    expect(bridgeStatus(node)).toMatchObject({ state: "online", counters: { perceptions: 4, duplicates: 0 } });
  }, 90_000);
});
