/**
 * What a node does with bytes from a client that is not ensoul: a raw NATS connection (no
 * Bus, no envelope codec) publishes hand-written MessagePack to a node on a real
 * nats-server, the way a client in another language built from docs/PROTOCOL.md would, or a
 * careless or hostile one. Everything that breaks the contract is dead-lettered once, with
 * its reason, and never reaches the soul.
 */
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { Packr } from "msgpackr";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { clusterSubjects, type Bus, type DeadLetter } from "../../../runtime/bus/index.ts";
import { connectClusterBus, parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { pause, watchDead, watchEnvelopes, type Watch } from "../../support/cluster/busWatch.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { bool, hex, int, map, mapOf, nil, perceptionBytes, perceptionFields, str } from "../../support/wire/msgpackBytes.ts";

describeWithNats("a node receiving raw bytes from a client in another language", () => {
  const dirs = tempDirs();
  const cluster = uniqueCluster("wire");
  const s = clusterSubjects(cluster);
  let server: NatsServerHandle;
  let node: EnsoulNode;
  let bus: Bus;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let dead: Watch<DeadLetter>;
  let ids = 0;
  const freshId = () => `01J9ZK3V8Q6W4R2T0Y5X7N${String(++ids).padStart(4, "0")}`;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const config = parseClusterConfig({ cluster, souls: [{ id: "echo", blueprint: echoSoul }], runtime: { heartbeatMs: 200, ackWaitMs: 2_000 } });
    node = await startNode({ config, nats: { servers: server.url }, nodeId: "n1", data: dirs.make(), store: { noSync: true }, log: () => undefined });
    bus = await connectClusterBus({ servers: server.url, cluster });
    dead = watchDead(bus, s.dead);
    nc = await connect({ servers: server.url });
    js = jetstream(nc);
  });
  afterAll(async () => {
    await nc?.close();
    await node?.stop();
    await bus?.close();
    await server?.dispose();
    dirs.cleanup();
  });
  let seenBefore = 0;
  beforeEach(() => {
    seenBefore = dead.seen.length;
  });

  /** The one dead letter this test's message caused: it comes, and no second one follows. */
  async function deadLetterFor(subject: string, what: string): Promise<DeadLetter> {
    const letter = await dead.next((d) => dead.seen.indexOf(d) >= seenBefore && d.subject === subject, 10_000, `the dead letter for ${what}`);
    await pause(400);
    expect(dead.seen.slice(seenBefore).filter((d) => d.subject === subject)).toHaveLength(1);
    return letter;
  }

  const perceiveRaw = (bytes: Uint8Array, id = freshId(), subject = s.perceive("echo")) => js.publish(subject, bytes, { msgID: id });

  it("answers a valid perception written byte by byte, and acks it as the stream does", async () => {
    const says = watchEnvelopes(bus, s.says("echo"), "speech");
    const id = freshId();
    const bytes = perceptionBytes("echo", id);
    const h = headers();
    h.set("Nats-Msg-Id", id);
    // The publish ack as the server sends it, before any client library rewrites it.
    const first = JSON.parse(new TextDecoder().decode((await nc.request(s.perceive("echo"), bytes, { headers: h, timeout: 5_000 })).data)) as Record<string, unknown>;
    expect(first).toEqual({ stream: `ENSOUL_${cluster}`, seq: expect.any(Number) });
    const again = JSON.parse(new TextDecoder().decode((await nc.request(s.perceive("echo"), bytes, { headers: h, timeout: 5_000 })).data)) as Record<string, unknown>;
    expect(again).toEqual({ stream: `ENSOUL_${cluster}`, seq: first.seq, duplicate: true });
    const answer = await says.next((e) => e.body.final && e.causation === id, 10_000, "the answer");
    expect(answer.body.text).toBe("echo: hi");
    says.stop();
  });

  it("dead-letters a msgpackr record (extension 0x72)", async () => {
    const id = freshId();
    const bytes = new Packr({ useRecords: true }).pack({ v: 1, id, kind: "perception", from: "raw", to: "echo", ts: 1_700_000_000_000, body: { action: "said", content: "x", name: "n" } });
    expect([bytes[0], bytes[1]]).toEqual([0xd4, 0x72]);
    await perceiveRaw(bytes, id);
    const letter = await deadLetterFor(s.perceive("echo"), "a record");
    expect(letter.reason).toMatch(/^not plain msgpack \(PROTOCOL\.md §4\): envelope holds extension type 114 \(a msgpackr record\)/);
  });

  it("dead-letters msgpackr's undefined (extension 0)", async () => {
    await perceiveRaw(map({ ...perceptionFields("echo", freshId()), trace: hex("d4 00 00") }));
    expect((await deadLetterFor(s.perceive("echo"), "undefined")).reason).toMatch(/envelope\.trace holds extension type 0 \(msgpackr's undefined\)/);
  });

  it("dead-letters a non-string key at the top level", async () => {
    const fields = Object.entries(perceptionFields("echo", freshId())).map(([k, v]): [Uint8Array, Uint8Array] => [str(k), v]);
    await perceiveRaw(mapOf([...fields, [int(7), str("seven")]]));
    expect((await deadLetterFor(s.perceive("echo"), "an integer key")).reason).toMatch(/a key of envelope is an integer, not a string/);
  });

  it("dead-letters a boolean key in body.meta", async () => {
    await perceiveRaw(perceptionBytes("echo", freshId(), { meta: mapOf([[bool(true), str("yes")]]) }));
    expect((await deadLetterFor(s.perceive("echo"), "a boolean key")).reason).toMatch(/a key of envelope\.body\.meta is a boolean, not a string/);
  });

  it("dead-letters an id with a control character at once, not after five failed deliveries", async () => {
    await perceiveRaw(perceptionBytes("echo", "01J9ZK3V8Q\u0007BELL"), "bell-id");
    const letter = await deadLetterFor(s.perceive("echo"), "the control character");
    expect(letter.reason).toMatch(/^invalid perception envelope: id: must not contain control characters/);
  });

  it("dead-letters an optional field sent as nil", async () => {
    await perceiveRaw(map({ ...perceptionFields("echo", freshId()), causation: nil }));
    expect((await deadLetterFor(s.perceive("echo"), "a nil causation")).reason).toMatch(/^invalid perception envelope: causation: /);
  });

  it("dead-letters a perception or a whisper whose `to` is not the soul of its subject", async () => {
    await perceiveRaw(perceptionBytes("someone-else", freshId()));
    expect((await deadLetterFor(s.perceive("echo"), "a misaddressed perception")).reason).toMatch(/addressed to 'someone-else' but arrived on the perceive subject of 'echo'/);
    seenBefore = dead.seen.length;
    nc.publish(s.whisper("echo"), whisperBytes("someone-else"));
    expect((await deadLetterFor(s.whisper("echo"), "a misaddressed whisper")).reason).toMatch(/addressed to 'someone-else' but arrived on the whisper subject of 'echo'/);
  });

  it.each(["b@d", ">", "*", "é"])("dead-letters a whisper on a subject whose soul token is %j", async (token) => {
    const subject = `ensoul.${cluster}.soul.${token}.whisper`;
    nc.publish(subject, whisperBytes(token));
    expect((await deadLetterFor(subject, `the whisper to ${token}`)).reason).toMatch(/^no soul: invalid soulId /);
  });

  it.each([">", "*", "b@d"])("dead-letters a perception on a subject whose soul token is %j (the stream stores it)", async (token) => {
    const subject = `ensoul.${cluster}.soul.${token}.perceive`;
    const ack = await perceiveRaw(perceptionBytes(token, freshId()), undefined, subject);
    expect(ack.stream).toBe(`ENSOUL_${cluster}`);
    expect((await deadLetterFor(subject, `the perception to ${token}`)).reason).toMatch(/^no soul: invalid soulId /);
  });

  it("never let any of it reach the soul", async () => {
    await node.idle();
    expect(node.status().souls.find((x) => x.id === "echo")?.turns).toBe(1);
  });

  it("reports a subject with no soul once in a cluster of two nodes: by the first node only", async () => {
    const two = uniqueCluster("wire2");
    const t = clusterSubjects(two);
    const config = parseClusterConfig({
      cluster: two,
      nodes: ["a", "b"],
      souls: [
        { id: "alpha", blueprint: echoSoul, node: "a" },
        { id: "beta", blueprint: echoSoul, node: "b" },
      ],
      runtime: { heartbeatMs: 200, ackWaitMs: 2_000 },
    });
    const nodes = [];
    for (const nodeId of ["a", "b"]) nodes.push(await startNode({ config, nats: { servers: server.url }, nodeId, data: dirs.make(), store: { noSync: true }, log: () => undefined }));
    const watcher = await connectClusterBus({ servers: server.url, cluster: two });
    try {
      const letters = watchDead(watcher, t.dead);
      const subjects = [`ensoul.${two}.soul.*.perceive`, `ensoul.${two}.soul.>.perceive`, `ensoul.${two}.soul.b@d.perceive`, `ensoul.${two}.soul.*.whisper`, `ensoul.${two}.soul.b@d.whisper`];
      for (const subject of subjects) {
        if (subject.endsWith(".perceive")) await js.publish(subject, perceptionBytes("alpha", freshId()));
        else nc.publish(subject, whisperBytes("alpha"));
      }
      for (const subject of subjects) await letters.next((d) => d.subject === subject, 10_000, `the dead letter for ${subject}`);
      await pause(500);
      expect(letters.seen.map((d) => d.subject).sort()).toEqual([...subjects].sort());
    } finally {
      await watcher.close();
      await Promise.all(nodes.map((n) => n.stop()));
    }
  });

  function whisperBytes(to: string): Uint8Array {
    return map({ v: int(1), id: str(freshId()), kind: str("whisper"), from: str("daimon-raw"), to: str(to), ts: int(1_700_000_000_000, true), body: map({ content: str("be kind"), source: str("raw") }) });
  }
});
