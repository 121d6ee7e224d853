/**
 * A node on a real nats-server whose speech cannot be stored when its turn ends (the cluster
 * stream is gone: an operator recreates it): the speech stays in the soul's outbox and is
 * published by a retry once the stream is back, with no further perception.
 *
 * Why a missing stream and not a stopped server: the NATS client buffers a publish made while
 * disconnected and sends it on reconnect, so a "failed" publish during a server outage can
 * still land in the stream. A publish with no stream to take it is refused outright.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess, type SoulEvent } from "../../../actors/soul/index.ts";
import { clusterSubjects, decodeEnvelope, isKind, streamName, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { connectClusterBus, parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { deferred } from "../../support/soul/helpers.ts";
import { tempDirs } from "../../support/tempDirs.ts";

describeWithNats("speech published after a failed publish, without a new perception", () => {
  const dirs = tempDirs();
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterAll(async () => {
    await server.dispose();
    dirs.cleanup();
  });

  it("publishes the final of a turn whose publish failed, from the outbox, once the stream takes it", async () => {
    const release = deferred();
    const slow: MentalProcess = async ({ workingMemory }) => {
      await release.promise;
      useActions().speak(`slow: ${usePerceptions().invokingPerception.content}`);
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "Slow", persona: "answers when let", initialProcess: slow, processes: { slow } });
    const cluster = uniqueCluster("retry");
    const s = clusterSubjects(cluster);
    const connectBus = (publishTimeoutMs?: number) =>
      connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100, ...(publishTimeoutMs ? { publishTimeoutMs } : {}) });
    // The node gives up on a publish after half a second, so its speech fails while the stream is gone.
    const nodeBus = await connectBus(500);
    const client = await connectBus();
    const buses: Bus[] = [nodeBus, client];
    const admin = await connect({ servers: server.url });
    const node = await startNode({ config: parseClusterConfig({ cluster, souls: [{ id: "slow", blueprint }] }), bus: nodeBus, placement: "all", data: dirs.make(), store: { noSync: true }, log: () => undefined });
    try {
      const soul = await node.soul("slow");
      const events: SoulEvent[] = [];
      soul.onEvent((e) => events.push(e));
      const one = await perceive(client, "slow", "one");
      await until(() => soul.state().running, 10_000, "the turn to start");

      await (await jetstreamManager(admin)).streams.delete(streamName(cluster));
      release.resolve();
      await until(() => events.some((e) => e.type === "error" && e.phase === "deliver"), 10_000, "the failed publish of the final");
      expect(node.store.actor("slow").pendingOutbox()).toHaveLength(1);

      // Connecting creates the stream again (as any participant may).
      const reader = await connectBus();
      buses.push(reader);
      const finals: Envelope<"speech">[] = [];
      await reader.durable(s.says("slow"), "check", (m) => {
        const d = decodeEnvelope(m.data);
        if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final) finals.push(d.envelope);
      });
      await until(() => finals.length > 0, 15_000, "the final, published by a retry");
      expect(finals.map((e) => [e.causation, e.body.text])).toEqual([[one.id, "slow: one"]]);
      await until(() => node.store.actor("slow").pendingOutbox().length === 0, 5_000, "the outbox entry to be acknowledged");
      expect(soul.state().turn).toBe(1);
    } finally {
      await node.stop().catch(() => undefined);
      await Promise.all(buses.map((b) => b.close().catch(() => undefined)));
      await admin.close();
    }
  }, 60_000);
});
