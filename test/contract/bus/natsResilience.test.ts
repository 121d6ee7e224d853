/**
 * What only the NATS bus promises: surviving a server restart without losing a durable
 * publish, redelivering what a crashed process never acked, and the auth options.
 */
import { createUser } from "@nats-io/nkeys";
import { afterEach, expect, it } from "vitest";
import { clusterSubjects, connectNatsBus, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Bus, type DurableMessage } from "../../../runtime/bus/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { deferred, settle, uniqueCluster, waitFor } from "./busContract.ts";

describeWithNats("NATS bus resilience (real nats-server)", () => {
  const servers: NatsServerHandle[] = [];
  const buses: Bus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close().catch(() => undefined)));
    await Promise.all(servers.splice(0).map((s) => s.dispose()));
  });
  const server = async (config?: string) => {
    const s = await startNatsServer({ jetstream: true, ...(config ? { config } : {}) });
    servers.push(s);
    return s;
  };
  const bus = async (b: Promise<Bus>) => {
    const ready = await b;
    buses.push(ready);
    return ready;
  };

  it("survives a server restart: perceptions published before, during and after are each delivered once", async () => {
    const srv = await server();
    const cluster = uniqueCluster("restart");
    const b = await bus(connectNatsBus({ servers: srv.url, cluster, reconnectTimeWaitMs: 100 }));
    const s = clusterSubjects(cluster);
    const received: string[] = [];
    await b.durable(s.allSouls("perceive"), "node1", (m) => {
      const decoded = decodeEnvelope(m.data);
      if (decoded.ok && isKind(decoded.envelope, "perception")) received.push(decoded.envelope.body.content);
    });
    const perceive = (label: string) => {
      const env = makeEnvelope("perception", "bridge-test", "ann", { action: "said", content: label, name: "tester" });
      return b.publish(s.perceive("ann"), encodeEnvelope(env), { msgId: env.id });
    };

    for (let i = 0; i < 5; i++) await perceive(`before-${i}`);
    await waitFor(() => received.length === 5, 5_000, "deliveries before the restart");
    await settle(100); // let the acks reach the server before it stops

    await srv.stop();
    let storedDuringOutage = 0;
    const during = Array.from({ length: 5 }, (_, i) => perceive(`during-${i}`).then(() => void storedDuringOutage++));
    await settle(300);
    expect(storedDuringOutage).toBe(0); // still waiting for the stream's ack, not dropped
    await srv.restart();
    await Promise.all(during); // each resolved only once the restarted stream stored it

    for (let i = 0; i < 5; i++) await perceive(`after-${i}`);
    await waitFor(() => received.length >= 15, 15_000, "deliveries after the restart");
    await settle(300);
    const expected = ["before", "during", "after"].flatMap((p) => Array.from({ length: 5 }, (_, i) => `${p}-${i}`));
    expect([...received].sort()).toEqual([...expected].sort());
  });

  it("redelivers to a new connection what a crashed one took but never acked", async () => {
    const srv = await server();
    const cluster = uniqueCluster("crash");
    const s = clusterSubjects(cluster);
    const first = await bus(connectNatsBus({ servers: srv.url, cluster }));
    const taken = deferred<DurableMessage>();
    await first.durable(s.allSouls("perceive"), "worker", (m) => {
      taken.resolve(m);
      return new Promise<void>(() => undefined); // hangs: the process "crashes" mid-turn
    }, { ackWaitMs: 1_000 });
    await first.publish(s.perceive("ann"), new TextEncoder().encode("in flight"), { msgId: "p-1" });
    const original = await taken.promise;
    await first.close(); // no drain, no ack

    const second = await bus(connectNatsBus({ servers: srv.url, cluster }));
    const again = deferred<DurableMessage>();
    await second.durable(s.allSouls("perceive"), "worker", (m) => again.resolve(m), { ackWaitMs: 1_000 });
    const redelivered = await again.promise;
    expect(redelivered.seq).toBe(original.seq);
    expect(new TextDecoder().decode(redelivered.data)).toBe("in flight");
    expect(redelivered.redelivered).toBe(true);
    expect(redelivered.deliveryCount).toBe(2);
  });

  it("fails a durable publish with a clear error when the server stays away past the deadline", async () => {
    const srv = await server();
    const cluster = uniqueCluster("deadline");
    const b = await bus(connectNatsBus({ servers: srv.url, cluster, publishTimeoutMs: 600, reconnectTimeWaitMs: 100 }));
    await srv.stop();
    await expect(b.publish(clusterSubjects(cluster).perceive("ann"), new Uint8Array([1]))).rejects.toThrow(/not stored within 600 ms/);
  });

  it("authenticates with an nkey seed, a token, or user and password", async () => {
    const user = createUser();
    const seed = new TextDecoder().decode(user.getSeed());
    const nkeySrv = await server(`authorization { users = [ { nkey: "${user.getPublicKey()}" } ] }`);
    const viaNkey = await bus(connectNatsBus({ servers: nkeySrv.url, cluster: uniqueCluster("nkey"), nkeySeed: seed }));
    expect(viaNkey.kind).toBe("nats");
    await expect(connectNatsBus({ servers: nkeySrv.url, cluster: "nope" })).rejects.toThrow(/authorization/i);

    const tokenSrv = await server(`authorization { token: "s3cret" }`);
    await bus(connectNatsBus({ servers: tokenSrv.url, cluster: uniqueCluster("token"), token: "s3cret" }));

    const passSrv = await server(`authorization { user: "soul", password: "pw" }`);
    await bus(connectNatsBus({ servers: passSrv.url, cluster: uniqueCluster("pass"), user: "soul", pass: "pw" }));
    await expect(connectNatsBus({ servers: passSrv.url, cluster: "nope", user: "soul", pass: "wrong" })).rejects.toThrow(/authorization/i);
  });
});
