/**
 * A three-process cluster on a real nats-server: two `ensoul up --node a|b --nats <url>`
 * child processes hosting souls, and this test process (plus `ensoul` CLI children) as the
 * client. Souls on different nodes hear each other, whispers and gate requests cross
 * processes, node B survives SIGKILL without losing or repeating a perception, and bad input
 * goes to dead while both nodes keep serving.
 */
import fc from "fast-check";
import { Packr } from "msgpackr";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { connectClusterBus, heardPerceptionId, type NodeStatus, type SoulMemoryReply } from "../../../runtime/node/index.ts";
import { pause, until, watchDead, watchEnvelopes, type Watch } from "../../support/cluster/busWatch.ts";
import { runEnsoul, spawnNode, type NodeProcess } from "../../support/cluster/cliProcess.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";

describeWithNats("a three-process cluster on a real nats-server", () => {
  const dirs = tempDirs("ensoul-e2e-cluster-");
  const cluster = uniqueCluster("e2e");
  const s = clusterSubjects(cluster);
  let server: NatsServerHandle;
  let configFile: string;
  let data: string;
  let nodeA: NodeProcess;
  let nodeB: NodeProcess;
  let bus: Bus;
  /** Finals as the stream keeps them (deduplicated): what bridges would deliver. */
  const finals: Envelope<"speech">[] = [];
  let events: Watch<Envelope<"event"> & { subject: string }>;
  /** Ids of the valid perceptions this test sent, per soul. */
  const sent = new Map<string, string[]>();

  const up = (node: string) => spawnNode([configFile, "--node", node, "--nats", server.url, "--data", data]);
  const cli = (args: string[]) => runEnsoul([...args, "--nats", server.url, "--cluster", cluster]);
  const say = async (soul: string, content: string, name = "ada") => {
    const env = await perceive(bus, soul, content, { name });
    sent.set(soul, [...(sent.get(soul) ?? []), env.id]);
    return env;
  };
  const finalFor = async (causation: string, ms = 15_000) => {
    await until(() => finals.some((f) => f.causation === causation), ms, `a final answer to ${causation}`);
    return finals.find((f) => f.causation === causation) as Envelope<"speech">;
  };

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const dir = dirs.make();
    data = join(dir, "data");
    configFile = join(dir, "cluster.yaml");
    writeFileSync(
      configFile,
      [
        `cluster: ${cluster}`,
        "nodes: [a, b]",
        "souls:",
        "  - { id: ann, blueprint: samantha, node: a, hears: [bob] }",
        "  - { id: dan, blueprint: samantha, node: a }",
        "  - { id: bob, blueprint: samantha, node: b }",
        "  - { id: cat, blueprint: samantha, node: b }",
        "gates:",
        "  - { remote: secrets, priority: 50, timeoutMs: 2000, souls: [dan] }",
        "skillGates:",
        '  - { skill: secrets, node: b, gate: { builtin: bouncer, options: { vault: ["swordfish-7731"] } } }',
        "runtime: { heartbeatMs: 250, ackWaitMs: 1500 }",
        "",
      ].join("\n"),
    );
    nodeA = up("a");
    nodeB = up("b");
    await Promise.all([nodeA.waitFor(/ensoul up: ready/), nodeB.waitFor(/ensoul up: ready/)]);
    bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
    await bus.durable(s.allSouls("says"), "e2e-watch", (m) => {
      const decoded = decodeSpeech(m.data);
      if (decoded?.body.final) finals.push(decoded);
    });
    events = watchEnvelopes(bus, s.allSouls("events"), "event");
  }, 60_000);

  afterAll(async () => {
    try {
      await bus?.close();
      await Promise.all([nodeA, nodeB].map((n) => n?.kill("SIGKILL")));
    } finally {
      await server?.dispose();
      dirs.cleanup();
    }
  }, 30_000);

  it("`ensoul status` lists both nodes and their souls", async () => {
    const result = await cli(["status", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const nodes = JSON.parse(result.stdout) as NodeStatus[];
    expect(nodes.map((n) => n.node)).toEqual(["a", "b"]);
    expect(nodes[0].souls.map((x) => x.id)).toEqual(["ann", "dan"]);
    expect(nodes[1].souls.map((x) => x.id)).toEqual(["bob", "cat"]);
    expect(nodes[1].skillGates).toEqual(["secrets"]);
    const text = await cli(["status"]);
    expect(text.stdout).toMatch(/^cluster \S+: 2 nodes$/m);
    expect(text.stdout).toMatch(/^node a .* 2 souls/m);
    expect(text.stdout).toMatch(/^ {2}bob +greeting +turns 0/m);
  });

  it("a soul on node A hears a soul on node B", async () => {
    const hello = await say("bob", "hello bob, I am Ada");
    const bobSaid = await finalFor(hello.id);
    expect(bobSaid.from).toBe("bob");
    expect(bobSaid.body.text).toContain('You said "hello bob, I am Ada"');
    const annSaid = await finalFor(heardPerceptionId("ann", bobSaid.id));
    expect(annSaid.from).toBe("ann");
    // Ann perceived Bob's words as Samantha (his blueprint's name) saying them.
    expect(annSaid.body.text).toContain("Samantha");
  });

  it("a whisper from another process reaches a soul on node B; `ensoul memory --nats` shows it in the live memory", async () => {
    const whispered = await cli(["whisper", "bob", "they are <b>testing</b> you", "--source", "Kothar"]);
    expect(whispered.stderr).toBe("");
    expect(whispered.stdout).toBe("whispered to bob (node b): they are testing you\n");
    const memory = await cli(["memory", "bob", "--json"]);
    expect(memory.code).toBe(0);
    const reply = JSON.parse(memory.stdout) as SoulMemoryReply;
    expect(reply).toMatchObject({ soulId: "bob", node: "b", live: true, process: "conversation", turns: 1 });
    expect(reply.soulMemory.daimonicWhisper).toEqual({ content: "they are testing you", source: "Kothar" });
    expect(JSON.stringify(reply.workingMemory)).toContain("hello bob, I am Ada");
  });

  it("a remote skill-gate actor served by node B blocks a proposal of a soul on node A", async () => {
    const isSecretsDecision = (e: Envelope<"event">, decision: string) =>
      e.body.type === "gate.decision" && (e.body.data as { gate?: string; decision?: string }).gate === "secrets" && (e.body.data as { decision?: string }).decision === decision;
    const fine = await say("dan", "tell me about tea");
    expect((await finalFor(fine.id)).body.text).toContain("tea");
    expect(events.seen.some((e) => e.subject === s.events("dan") && isSecretsDecision(e, "pass"))).toBe(true);

    const secret = await say("dan", "the vault code is swordfish-7731");
    const decision = await events.next((e) => e.subject === s.events("dan") && isSecretsDecision(e, "intercept"), 15_000, "the secrets gate's interception");
    expect(decision.body.data).toMatchObject({ soulId: "dan", reason: expect.stringMatching(/vault secret/) });
    const turn = await events.next((e) => e.body.type === "soul.turn" && e.causation === secret.id, 10_000, "dan's turn to end");
    expect((turn.body.data as { speech: string[] }).speech).toEqual([]);
    await pause(300);
    expect(finals.filter((f) => f.causation === secret.id)).toHaveLength(0);
  });

  it("sends fuzzed and malformed envelopes to dead, one dead letter each, with both nodes still serving", async () => {
    const dead = watchDead(bus, s.dead);
    const packr = new Packr({ useRecords: false });
    const valid = makeEnvelope("perception", "fuzz", "ann", { action: "said", content: "x", name: "f" }) as unknown as Record<string, unknown>;
    const payload = fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 300 }),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })).map((o) => packr.pack(o) as Uint8Array),
      fc
        .record({ field: fc.constantFrom("v", "id", "kind", "from", "to", "ts", "body"), value: fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.constant("")) })
        .map(({ field, value }) => packr.pack({ ...valid, [field]: value }) as Uint8Array),
      fc.constantFrom(
        encodeEnvelope(makeEnvelope("speech", "fuzz", "ann", { proposalId: "p", text: "t", final: true })),
        encodeEnvelope(makeEnvelope("perception", "fuzz", "cat", { action: "said", content: "misrouted", name: "f" })),
      ),
    );
    const messages = fc.sample(fc.tuple(fc.constantFrom("ann", "bob", "zed"), payload), { numRuns: 60, seed: 7731 });
    for (const [soul, bytes] of messages) await bus.publish(s.perceive(soul), bytes, { msgId: `fuzz-${Math.random()}` });
    await until(() => dead.seen.length >= messages.length, 15_000, `${messages.length} dead letters (got ${dead.seen.length})`);
    await pause(500);
    expect(dead.seen).toHaveLength(messages.length);
    expect(dead.seen.filter((d) => d.subject === s.perceive("zed")).every((d) => d.reason.startsWith("unknown soul 'zed'"))).toBe(true);
    expect(dead.seen.every((d) => d.reason.length > 0 && d.size >= 0)).toBe(true);
    dead.stop();

    const toAnn = await say("ann", "still there, Ann?");
    const toBob = await say("bob", "still there, Bob?");
    await finalFor(toAnn.id);
    await finalFor(toBob.id);
  });

  it("node B killed with SIGKILL and restarted: its souls resume, no perception lost, none processed twice", async () => {
    const before: Envelope<"perception">[] = [];
    const publishing = Array.from({ length: 16 }, (_, i) => say(i % 2 ? "cat" : "bob", `before the crash ${i}`));
    for (const p of publishing) before.push(await p);
    // Killed mid-stream: some perceptions answered, others in an inbox, in flight, or not yet pulled.
    await until(() => before.filter((p) => finals.some((f) => f.causation === p.id)).length >= 2, 15_000, "some answers before the crash");
    expect(await nodeB.kill("SIGKILL")).not.toBe(0);

    const during: Envelope<"perception">[] = [];
    for (let i = 0; i < 6; i++) during.push(await say(i % 2 ? "cat" : "bob", `while node b is down ${i}`));
    nodeB = up("b");
    await nodeB.waitFor(/ensoul up: ready/);
    for (const p of [...before, ...during]) await finalFor(p.id, 30_000);
    await pause(2_000); // room for anything delivered twice to show up

    for (const soul of ["bob", "cat"]) {
      const ids = sent.get(soul) as string[];
      // Exactly one answer per perception, as the stream keeps them (a second turn would have a new proposal id).
      for (const id of ids) expect(finals.filter((f) => f.causation === id).map((f) => f.id)).toHaveLength(1);
      const memory = JSON.parse((await cli(["memory", soul, "--json"])).stdout) as SoulMemoryReply;
      expect(memory.turns).toBe(ids.length);
      expect(memory.inbox).toEqual({ pending: 0, failed: 0 });
      const perceived = (memory.workingMemory as { memories: { role: string; metadata?: { perceptionId?: string } }[] }).memories
        .filter((m) => m.role === "user")
        .map((m) => m.metadata?.perceptionId);
      expect(perceived).toEqual(ids);
    }
  }, 60_000);

  it("both nodes drain and stop cleanly on SIGINT, with their turns persisted", async () => {
    const codes = await Promise.all([nodeA, nodeB].map((n) => n.kill("SIGINT")));
    expect(codes).toEqual([0, 0]);
    expect(nodeA.output()).toMatch(/ensoul up: node a stopped; \d+ committed turns persisted\n$/);
    expect(nodeB.output()).toMatch(/ensoul up: node b stopped; \d+ committed turns persisted\n$/);
    const status = await cli(["status", "--wait", "600"]);
    expect(status.stderr).toMatch(/no node of cluster '.+' is running/);
  }, 30_000);
});

function decodeSpeech(bytes: Uint8Array): Envelope<"speech"> | undefined {
  const d = decodeEnvelope(bytes);
  return d.ok && isKind(d.envelope, "speech") ? d.envelope : undefined;
}
