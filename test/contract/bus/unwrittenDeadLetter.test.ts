/**
 * A durable message that failed its last allowed delivery is terminated only once its dead
 * letter is written. Here the dead letter cannot be published: the handler's error makes the
 * record larger than the server's (or the in-process bus's) max payload, while the message
 * itself is small. The message must come back, not vanish; once a failure's dead letter fits,
 * it is dead-lettered and ended as usual.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { acceptEnvelopes, clusterSubjects, connectNatsBus, createInProcessBus, decodeDeadLetter, streamName, type Bus } from "../../../runtime/bus/index.ts";
import { jetStreamPerceptionSource } from "../../../runtime/node/jetStreamPerceptionSource.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { bytes, uniqueCluster, waitFor } from "./busContract.ts";

/** Small enough that a dead letter quoting a 1,000-character error (its reason keeps 1,024) does not fit. */
const MAX_PAYLOAD = 1024;

function unwrittenDeadLetterSuite(make: (cluster: string) => Promise<Bus>): void {
  const open: Bus[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((bus) => bus.close()));
  });

  it("redelivers a message whose dead letter could not be published, and dead-letters it once a record fits", async () => {
    const bus = await make(uniqueCluster("undead"));
    open.push(bus);
    const s = clusterSubjects(bus.cluster);
    const dead: Uint8Array[] = [];
    bus.subscribe(s.dead, (m) => void dead.push(m.data));
    const deliveries: number[] = [];
    await bus.durable(
      s.perceive("ann"),
      "strict",
      (m) => {
        deliveries.push(m.deliveryCount);
        // Deliveries 2 and 3 are past the last allowed one (2) and their dead letter is too big.
        if (m.deliveryCount < 4) throw new Error(`cannot digest ${"x".repeat(1000)}`);
        throw new Error("cannot digest, briefly");
      },
      { maxDeliver: 2, retryDelayMs: 10 },
    );
    await bus.publish(s.perceive("ann"), bytes("poison"));

    await waitFor(() => dead.length === 1, 10_000, "the dead letter of the fourth delivery");
    expect(deliveries).toEqual([1, 2, 3, 4]);
    const record = decodeDeadLetter(dead[0]!);
    expect(record?.reason).toMatch(/^handler failed on delivery 4, the last one allowed: cannot digest, briefly$/);
    expect(record?.head).toBe(Buffer.from("poison").toString("base64"));
    // Ended once its dead letter is written: no fifth delivery.
    await new Promise((r) => setTimeout(r, 300));
    expect(deliveries).toHaveLength(4);
  });
}

describe("an unwritten dead letter: in-process bus", () => {
  unwrittenDeadLetterSuite(async (cluster) => createInProcessBus({ cluster, maxPayload: MAX_PAYLOAD, onHandlerError: () => undefined }));

  it("acceptEnvelopes on a durable consumer: an invalid message whose dead letter cannot be published is not acked", async () => {
    // 400 bytes that are no MessagePack: their dead letter (the first 256 in base64, with subject and reason) exceeds 450.
    const bus = createInProcessBus({ cluster: uniqueCluster("undead"), maxPayload: 450, onHandlerError: () => undefined });
    const s = clusterSubjects(bus.cluster);
    const deliveries: number[] = [];
    const accept = acceptEnvelopes(bus, () => undefined);
    await bus.durable(s.perceive("ann"), "strict", async (m) => {
      deliveries.push(m.deliveryCount);
      await accept(m);
    }, { maxDeliver: 2, retryDelayMs: 10 });
    await bus.publish(s.perceive("ann"), new Uint8Array(400).fill(0xc1));
    try {
      await waitFor(() => deliveries.length >= 3, 5_000, "redeliveries of the refused message");
      expect(deliveries.slice(0, 3)).toEqual([1, 2, 3]);
    } finally {
      await bus.close();
    }
  });
});

describeWithNats("an unwritten dead letter: NATS bus (real nats-server)", () => {
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true, config: `max_payload: ${MAX_PAYLOAD}\n` });
  });
  afterAll(async () => {
    await server?.dispose();
  });
  unwrittenDeadLetterSuite(async (cluster) => connectNatsBus({ servers: server.url, cluster, onHandlerError: () => undefined }));

  it("the node's own JetStream perception source: redelivers a perception whose dead letter could not be published", async () => {
    const bus = await connectNatsBus({ servers: server.url, cluster: uniqueCluster("undead"), onHandlerError: () => undefined });
    const s = clusterSubjects(bus.cluster);
    const dead: Uint8Array[] = [];
    bus.subscribe(s.dead, (m) => void dead.push(m.data));
    let calls = 0;
    const source = await jetStreamPerceptionSource({
      bus,
      nats: { servers: server.url },
      stream: streamName(bus.cluster),
      filter: s.allSouls("perceive"),
      consumer: "node-n1",
      name: "undead-node",
      ackWaitMs: 30_000,
      maxInFlight: 8,
      maxDeliver: 2,
      retryDelayMs: 10,
      report: () => undefined,
      handler: async () => {
        calls++;
        throw new Error(calls < 4 ? `cannot digest ${"x".repeat(1000)}` : "cannot digest, briefly");
      },
    });
    try {
      await bus.publish(s.perceive("ann"), bytes("poison"));
      await waitFor(() => dead.length === 1, 10_000, "the dead letter of the fourth delivery");
      expect(calls).toBe(4);
      expect(decodeDeadLetter(dead[0]!)?.reason).toBe("handler failed on delivery 4, the last one allowed: cannot digest, briefly");
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(4);
    } finally {
      await source.stop();
      await bus.close();
    }
  });
});
