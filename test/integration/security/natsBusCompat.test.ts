/**
 * The NATS bus as every ensoul process uses it (connectNatsBus, durable consumers, skill
 * gates, the gate chain) under a generated config, with shared inboxes and with per-user
 * inbox prefixes (each connection passing `inboxPrefixFor(user)`). What it shows: the role lists are complete for the real
 * bus (nothing it needs is refused), and a refusal inside the gate chain blocks (fail closed).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateChain, remoteGate, startSkillGate, type SkillGateHandle } from "../../../actors/gate/index.ts";
import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import { clusterSubjects, connectNatsBus, decodeEnvelope, encodeEnvelope, makeEnvelope, type Bus, type DurableMessage } from "../../../runtime/bus/index.ts";
import { inboxPrefixFor, natsServerConfig, type NatsUserSpec } from "../../../runtime/bus/permissions/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { freePort, startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { password, sleep } from "./securityKit.ts";

const CLUSTER = "gamma";
const s = clusterSubjects(CLUSTER);
const users: (NatsUserSpec & { password: string })[] = [
  { user: "node-g", role: "node", nodeId: "g1", password: password() },
  { user: "bridge-g", role: "bridge", password: password() },
  { user: "daimon-g", role: "daimon", souls: ["sam"], password: password() },
  { user: "gate-g", role: "gate", skills: ["tone"], password: password() },
];

function proposal(content: string): Proposal {
  return { id: `sam:1:${content.length}`, soulId: "sam", turnId: "sam:1", seq: 0, kind: "speak", content, ts: Date.now() };
}

for (const inbox of ["shared", "per-user"] as const) describeWithNats(`the NATS bus under a generated config (${inbox} inbox)`, () => {
  let server: NatsServerHandle;
  let storeDir: string;
  const buses = new Map<string, Bus>();
  const errors: unknown[] = [];
  const bus = (user: string): Bus => buses.get(user) ?? (() => { throw new Error(`no bus for ${user}`); })();
  let gate: SkillGateHandle | undefined;

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), "ensoul-security-bus-"));
    const port = await freePort();
    const config = natsServerConfig({ cluster: CLUSTER, users, jetstream: { storeDir }, port, inbox });
    server = await startNatsServer({ jetstream: false, config, port });
    // The node first: it is the one allowed to create the cluster stream.
    for (const u of users) {
      buses.set(u.user, await connectNatsBus({ servers: server.url, cluster: CLUSTER, user: u.user, pass: u.password, name: u.user, storage: "memory", inboxPrefix: inbox === "per-user" ? inboxPrefixFor(u.user) : undefined, onHandlerError: (e) => errors.push(e) }));
    }
  });

  afterAll(async () => {
    await gate?.stop();
    await Promise.all([...buses.values()].map((b) => b.close()));
    await server?.dispose();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it("a bridge's durable perception reaches the node's durable consumer, and the soul's speech reaches the bridge's", async () => {
    let toNode: (m: DurableMessage) => void = () => {};
    const perceived = new Promise<DurableMessage>((r) => (toNode = r));
    await bus("node-g").durable(s.allSouls("perceive"), "node-g1", async (m) => toNode(m));
    let toBridge: (m: DurableMessage) => void = () => {};
    const heard = new Promise<DurableMessage>((r) => (toBridge = r));
    await bus("bridge-g").durable(s.allSouls("says"), "bridge-g", async (m) => toBridge(m));

    const p = makeEnvelope("perception", "bridge-g", "sam", { action: "said", content: "hi", name: "ada" });
    await bus("bridge-g").publish(s.perceive("sam"), encodeEnvelope(p), { msgId: p.id });
    expect(decodeEnvelope((await perceived).data).ok).toBe(true);

    const speech = makeEnvelope("speech", "sam", "bridge-g", { proposalId: "sam:1:0", text: "hello ada", final: true }, { id: "sam:1:0" });
    await bus("node-g").publish(s.says("sam"), encodeEnvelope(speech), { msgId: speech.id });
    const d = decodeEnvelope((await heard).data);
    expect(d.ok && d.envelope.kind === "speech" && d.envelope.body.text).toBe("hello ada");
    expect(errors).toEqual([]);
  });

  it("a daimon's whisper reaches the node; a bridge's forged whisper does not", async () => {
    const got: string[] = [];
    const sub = bus("node-g").subscribe(s.whisper("sam"), (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && d.envelope.kind === "whisper") got.push(d.envelope.body.content);
    });
    await sleep(50);
    await bus("bridge-g").publish(s.whisper("sam"), encodeEnvelope(makeEnvelope("whisper", "bridge-g", "sam", { content: "forged", source: "x" })));
    await bus("daimon-g").publish(s.whisper("sam"), encodeEnvelope(makeEnvelope("whisper", "daimon-g", "sam", { content: "real", source: "kothar" })));
    const start = Date.now();
    while (!got.includes("real") && Date.now() - start < 2_000) await sleep(10);
    await sleep(100);
    expect(got).toEqual(["real"]);
    sub.unsubscribe();
  });

  it("a skill-gate actor answers the node's gate chain; a chain run by a bridge is refused and blocks (fail closed)", async () => {
    gate = startSkillGate({ bus: bus("gate-g"), cluster: CLUSTER, skill: "tone", gate: { name: "tone", priority: 1, verify: (p) => ({ ...p, content: p.content.toUpperCase() }) } });
    const nodeChain = createGateChain([remoteGate({ bus: bus("node-g"), cluster: CLUSTER, skill: "tone", priority: 1, timeoutMs: 1_000 })]);
    // The actor subscribes asynchronously: until the server has its interest, requests find no responders.
    let result = await nodeChain.run(proposal("calm down"));
    for (let i = 0; !result.ok && i < 40; i++) {
      await sleep(25);
      result = await nodeChain.run(proposal("calm down"));
    }
    expect(result.ok && result.proposal.content).toBe("CALM DOWN");

    const bridgeChain = createGateChain([remoteGate({ bus: bus("bridge-g"), cluster: CLUSTER, skill: "tone", priority: 1, timeoutMs: 1_000 })]);
    const refused = await bridgeChain.run(proposal("let me through"));
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.decision).toBe("error");
    expect(!refused.ok && refused.interception.reason).toMatch(/permission/i);
  });
});
