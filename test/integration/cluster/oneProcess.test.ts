/**
 * A whole cluster in one process, on the in-process bus, from a config object: the node with
 * real souls, real LMDB in a temp dir, and the test as a bridge on the same bus.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DAIMONIC_REGION, DAIMONIC_WHISPER_KEY } from "../../../actors/daimon/index.ts";
import { clusterSubjects, encodeEnvelope, makeEnvelope, type Bus } from "../../../runtime/bus/index.ts";
import { heardPerceptionId, parseClusterConfig, requestControl, startNode, type EnsoulNode, type NodeStatus, type SoulMemoryReply } from "../../../runtime/node/index.ts";
import { createOfflineModel, ModelRegistry, type LanguageModel } from "../../../runtime/providers/index.ts";
import { openStore } from "../../../runtime/store/index.ts";
import { echoSoul, mindfulSoul } from "../../support/cluster/blueprints.ts";
import { until, watchDead, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive, whisper } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const config = () =>
  parseClusterConfig({
    cluster: "one",
    souls: [
      { id: "sam", blueprint: "samantha" },
      { id: "echo", blueprint: echoSoul },
      { id: "mindful", blueprint: mindfulSoul },
      { id: "listener", blueprint: echoSoul, hears: ["echo"] },
      { id: "guarded", blueprint: echoSoul },
    ],
    daimons: [{ soul: "sam", name: "Kothar", persona: "You are Kothar, brief and sardonic.", mode: "off" }],
    gates: [
      { builtin: "bouncer", souls: ["guarded"], options: { vault: ["swordfish-7731"] } },
      { builtin: "approval", souls: ["guarded"], options: { kinds: ["dispatch"] } },
    ],
    approvals: { authorizedUsers: ["boss"] },
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });

describe("a one-process cluster on the in-process bus", () => {
  let node: EnsoulNode;
  let bus: Bus;
  let data: string;
  const s = clusterSubjects("one");

  beforeAll(async () => {
    data = dirs.make();
    node = await startNode({ config: config(), data, store: { noSync: true }, log: () => undefined });
    bus = node.bus;
  });
  afterAll(async () => {
    await node.stop();
  });

  it("hosts every soul of the config, in one node named local", () => {
    expect(node.id).toBe("local");
    expect([...node.souls].sort()).toEqual(["echo", "guarded", "listener", "mindful", "sam"]);
    expect(bus.kind).toBe("in-process");
  });

  it("turns a perception into speech on the soul's says subject: streamed chunks, then the final", async () => {
    const says = watchEnvelopes(bus, s.says("sam"), "speech");
    const env = await perceive(bus, "sam", "hello there");
    const final = await says.next((e) => e.body.final && e.causation === env.id, 10_000, "sam's final speech");
    const chunks = says.seen.filter((e) => !e.body.final && e.body.proposalId === final.body.proposalId);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.body.chunk)).toEqual(chunks.map((_, i) => i));
    expect(says.seen.indexOf(final)).toBeGreaterThan(says.seen.indexOf(chunks[chunks.length - 1]));
    expect(chunks.map((c) => c.body.text).join("")).toBe(final.body.text);
    expect(final.body.text).toContain('You said "hello there"');
    // Stable ids: the proposal id for the final, plus the chunk index for chunks.
    expect(final.id).toBe(final.body.proposalId);
    expect(chunks[1].id).toBe(`${final.body.proposalId}~1`);
    expect(final.from).toBe("sam");
    expect(final.to).toBe("bridge-test");
    expect(chunks.every((c) => c.causation === env.id)).toBe(true);
    says.stop();
  });

  it("processes a redelivered perception (same envelope id) once", async () => {
    const says = watchEnvelopes(bus, s.says("echo"), "speech");
    const env = makeEnvelope("perception", "bridge-test", "echo", { action: "said", content: "only once", name: "ada" });
    await bus.publish(s.perceive("echo"), encodeEnvelope(env), { msgId: env.id });
    await says.next((e) => e.body.final && e.causation === env.id, 5_000, "the first answer");
    const turns = (await node.soul("echo")).state().turn;
    // A different Nats-Msg-Id gets past the stream's dedupe, as a re-send after its window would.
    await bus.publish(s.perceive("echo"), encodeEnvelope(env), { msgId: `${env.id}-again` });
    await until(() => node.status().counters.duplicates >= 1, 5_000, "the duplicate to be recognised");
    await node.idle();
    expect((await node.soul("echo")).state().turn).toBe(turns);
    expect(says.seen.filter((e) => e.body.final && e.causation === env.id)).toHaveLength(1);
    says.stop();
  });

  it("sends invalid envelopes to dead with their reason, and keeps serving", async () => {
    const dead = watchDead(bus, s.dead);
    const says = watchEnvelopes(bus, s.says("echo"), "speech");
    await bus.publish(s.perceive("echo"), new Uint8Array([0xc1, 0x00, 0x13]));
    await bus.publish(s.perceive("echo"), encodeEnvelope(makeEnvelope("whisper", "x", "echo", { content: "psst", source: "x" })));
    await bus.publish(s.perceive("echo"), encodeEnvelope(makeEnvelope("perception", "x", "sam", { action: "said", content: "misrouted", name: "ada" })));
    await bus.publish(s.perceive("echo"), encodeEnvelope(makeEnvelope("perception", "x", "echo", { action: "said", content: "x", name: "ada", process: "nowhere" })));
    await bus.publish(s.perceive("echo"), new TextEncoder().encode(JSON.stringify({ v: 1, kind: "perception" })));
    await until(() => dead.seen.length >= 5, 5_000, "five dead letters");
    const reasons = dead.seen.map((d) => d.reason);
    expect(reasons[0]).toMatch(/^not msgpack|not a plain msgpack value|envelope must be a msgpack map/);
    expect(reasons[1]).toBe("unexpected kind whisper (this receiver takes perception)");
    expect(reasons[2]).toMatch(/addressed to 'sam' but arrived on the perceive subject of 'echo'/);
    // A route to a process is the node's to make (on the internal subject), never a bridge's.
    expect(reasons[3]).toMatch(/carries 'process': only the node hosting a soul may set 'internal' or 'process', on ensoul\.one\.soul\.echo\.internal/);
    expect(reasons[4]).toMatch(/not msgpack|msgpack map/);
    expect(dead.seen.every((d) => d.subject === s.perceive("echo"))).toBe(true);

    const env = await perceive(bus, "echo", "still here?");
    const final = await says.next((e) => e.body.final && e.causation === env.id, 5_000, "an answer after the bad input");
    expect(final.body.text).toBe("echo: still here?");
    dead.stop();
    says.stop();
  });

  it("dead-letters a perception for a soul no node hosts as an unknown soul", async () => {
    const dead = watchDead(bus, s.dead);
    await perceive(bus, "ghost", "anyone?");
    const letter = await dead.next((d) => d.subject === s.perceive("ghost"), 5_000, "the unknown soul's dead letter");
    expect(letter.reason).toBe("unknown soul 'ghost' (no node of cluster 'one' hosts it)");
    dead.stop();
  });

  it("keeps a whisper from the bus, sanitised, for exactly one turn of a soul that consumes it", async () => {
    const says = watchEnvelopes(bus, s.says("mindful"), "speech");
    await whisper(bus, "mindful", "they <b>need</b> reassurance ```now```");
    await until(() => node.memory("mindful").soulMemory[DAIMONIC_WHISPER_KEY] !== undefined, 5_000, "the whisper to be kept");
    expect(node.memory("mindful").soulMemory[DAIMONIC_WHISPER_KEY]).toEqual({ content: "they need reassurance now", source: "Kothar" });

    const first = await perceive(bus, "mindful", "how am I doing?");
    const used = await says.next((e) => e.body.final && e.causation === first.id, 5_000, "the first turn's answer");
    expect(used.body.text).toBe("echo: how am I doing? (intuition: they need reassurance now)");
    await node.idle();
    expect(node.memory("mindful").soulMemory[DAIMONIC_WHISPER_KEY]).toBeNull();

    const second = await perceive(bus, "mindful", "and now?");
    const plain = await says.next((e) => e.body.final && e.causation === second.id, 5_000, "the second turn's answer");
    expect(plain.body.text).toBe("echo: and now?");
    says.stop();
  });

  it("keeps a whisper for samantha, recalls it into her next turn only, and consumes it", async () => {
    await whisper(bus, "sam", "they are testing you");
    await until(() => node.memory("sam").soulMemory[DAIMONIC_WHISPER_KEY] != null, 5_000, "the whisper to be kept");
    expect(node.memory("sam").soulMemory[DAIMONIC_WHISPER_KEY]).toEqual({ content: "they are testing you", source: "Kothar" });
    const says = watchEnvelopes(bus, s.says("sam"), "speech");
    const env = await perceive(bus, "sam", "anything new?");
    await says.next((e) => e.body.final && e.causation === env.id, 10_000, "sam's answer");
    await node.idle();
    // Consumed by the turn that recalled it (the soul runtime does this), and the recall is
    // not left in the committed working memory. (Her answer may follow the whisper, and the
    // offline model's does, visibly: what must not stay is the recalled intuition itself.)
    expect(node.memory("sam").soulMemory[DAIMONIC_WHISPER_KEY] ?? null).toBeNull();
    const committed = node.memory("sam").workingMemory as { memories: { region?: string }[] };
    expect(committed.memories.filter((m) => m.region === DAIMONIC_REGION)).toEqual([]);
    expect(JSON.stringify(committed)).not.toContain("Daimonic Intuition");
    says.stop();
  });

  it("dead-letters a whisper that is empty once sanitised", async () => {
    const dead = watchDead(bus, s.dead);
    await whisper(bus, "echo", "<b></b> ``` ```");
    const letter = await dead.next((d) => d.subject === s.whisper("echo"), 5_000, "the empty whisper's dead letter");
    expect(letter.reason).toBe("whisper is empty once sanitised");
    dead.stop();
  });

  it("lets a soul hear another soul's final speech, once, with the speech as its cause", async () => {
    const echoSays = watchEnvelopes(bus, s.says("echo"), "speech");
    const listenerSays = watchEnvelopes(bus, s.says("listener"), "speech");
    const heard = watchEnvelopes(bus, s.perceive("listener"), "perception");
    const env = await perceive(bus, "echo", "pass it on");
    const spoken = await echoSays.next((e) => e.body.final && e.causation === env.id, 5_000, "echo's speech");
    const perception = await heard.next((p) => p.causation === spoken.id, 5_000, "the listener's perception of it");
    expect(perception.id).toBe(heardPerceptionId("listener", spoken.id));
    expect(perception.body).toMatchObject({ action: "said", content: "echo: pass it on", name: "Echo", meta: { heardFrom: "echo" } });
    const answer = await listenerSays.next((e) => e.body.final && e.causation === perception.id, 5_000, "the listener's answer");
    expect(answer.body.text).toBe("echo: echo: pass it on");
    await node.idle();
    expect(heard.seen.filter((p) => p.causation === spoken.id)).toHaveLength(1);
    for (const w of [echoSays, listenerSays, heard]) w.stop();
  });

  it("runs each soul's gate chain: the bouncer intercepts, the approval gate holds until an authorised user approves", async () => {
    const says = watchEnvelopes(bus, s.says("guarded"), "speech");
    const events = watchEnvelopes(bus, s.events("guarded"), "event");
    const secret = await perceive(bus, "guarded", "the code is swordfish-7731");
    const blocked = await events.next((e) => e.body.type === "gate.decision" && (e.body.data as { decision: string }).decision === "intercept", 5_000, "the bouncer's decision");
    expect(blocked.body.data).toMatchObject({ gate: "bouncer", reason: expect.stringMatching(/vault secret/) });
    await events.next((e) => e.body.type === "soul.turn" && e.causation === secret.id, 5_000, "the turn to end");
    expect(says.seen.filter((e) => e.causation === secret.id)).toHaveLength(0);
    // Nothing about the interception repeats what was blocked.
    const intercepted = await events.next((e) => e.body.type === "soul.intercepted", 5_000, "the soul's intercepted event");
    expect(intercepted.body.data).toMatchObject({ proposal: { kind: "speak", causation: secret.id }, reason: expect.stringMatching(/^bouncer: /) });
    expect(JSON.stringify(events.seen)).not.toContain("swordfish-7731");

    const act = await perceive(bus, "guarded", "act deploy");
    const held = await events.next((e) => e.body.type === "gate.decision" && (e.body.data as { decision: string }).decision === "hold", 5_000, "the hold");
    const proposalId = (held.body.data as { proposalId: string }).proposalId;
    await events.next((e) => e.body.type === "soul.turn" && e.causation === act.id, 5_000, "the turn to end");

    const refused = await perceive(bus, "guarded", proposalId, { action: "approve", name: "mallory" });
    const refusal = await events.next((e) => e.body.type === "node.approval" && e.causation === refused.id, 5_000, "the refusal");
    expect(refusal.body.data).toMatchObject({ outcome: "refused", user: "mallory" });

    const turnsBefore = (await node.soul("guarded")).state().turn;
    const approved = await perceive(bus, "guarded", proposalId, { action: "approve", name: "boss" });
    const approval = await events.next((e) => e.body.type === "node.approval" && e.causation === approved.id, 5_000, "the approval");
    expect(approval.body.data).toMatchObject({ outcome: "approved", proposalId });
    const dispatched = await events.next((e) => e.body.type === "soul.dispatch", 5_000, "the dispatched action");
    expect(dispatched.body.data).toMatchObject({ proposalId, action: "deploy" });
    // Approvals are handled before the soul: they are not turns.
    expect((await node.soul("guarded")).state().turn).toBe(turnsBefore);
    says.stop();
    events.stop();
  });

  it("answers node control on the bus: heartbeat, status, memory, daimon", async () => {
    const beats = watchEnvelopesRaw(bus, s.node("local", "heartbeat"));
    await until(() => beats.length >= 2, 2_000, "two heartbeats");
    const status = await requestControl<NodeStatus>(bus, "local", "status");
    expect(status).toMatchObject({ node: "local", cluster: "one", pid: process.pid, state: "running", bus: "in-process" });
    expect(status.souls.find((x) => x.id === "echo")).toMatchObject({ name: "Echo", process: "echo", status: expect.stringMatching(/active|running/) });
    expect(status.daimons).toEqual([{ soul: "sam", name: "Kothar", mode: "off" }]);

    const memory = await requestControl<SoulMemoryReply>(bus, "local", "memory", { soulId: "echo" });
    expect(memory).toMatchObject({ soulId: "echo", node: "local", process: "echo", live: true });
    expect(JSON.stringify(memory.workingMemory)).toContain("pass it on");
    await expect(requestControl(bus, "local", "memory", { soulId: "ghost" })).rejects.toThrow("unknown soul 'ghost'");

    const switched = await requestControl<{ daimons: unknown[] }>(bus, "local", "daimon", { soulId: "sam", mode: "whisper" });
    expect(switched.daimons).toEqual([{ soul: "sam", name: "Kothar", mode: "whisper" }]);
    await expect(requestControl(bus, "local", "daimon", { soulId: "sam", mode: "loud" })).rejects.toThrow(/daimon mode must be one of/);
    await expect(requestControl(bus, "local", "daimon", { soulId: "echo", mode: "off" })).rejects.toThrow("soul 'echo' has no daimon on this node");
    node.setDaimonMode("sam", "off");
  });
});

describe("stopping a one-process cluster", () => {
  afterEach(() => dirs.cleanup());

  it("stops on a `stop` request after the running turns, with every committed turn persisted", async () => {
    const data = dirs.make();
    const node = await startNode({ config: config(), data, store: { noSync: true }, log: () => undefined });
    const bus = node.bus;
    const says = watchEnvelopes(bus, clusterSubjects("one").says("echo"), "speech");
    const sent: Awaited<ReturnType<typeof perceive>>[] = [];
    for (let i = 0; i < 20; i++) sent.push(await perceive(bus, "echo", `message ${i}`));
    await says.next((e) => e.body.final && e.causation === sent[0].id, 5_000, "the first answer");
    await requestControl(bus, "local", "stop");
    await node.stopped;
    const store = openStore({ path: `${data}/local` });
    try {
      const state = store.actor("echo").loadState();
      // Every perception the node took in (and acked) is a committed turn or waits in the inbox:
      // echo's, and the listener's, which hears echo. (What the in-process stream still held is
      // gone with the process: only NATS keeps that.)
      const takenIn = (id: string) => (store.actor(id).loadState()?.turn ?? 0) + store.actor(id).pendingInbox().length;
      const accepted = node.registry.getSnapshot().context.counters.perceptions;
      expect(takenIn("echo")).toBeGreaterThanOrEqual(1);
      expect(takenIn("echo") + takenIn("listener")).toBe(accepted);
      expect(node.registry.getSnapshot().context.souls.get("echo")?.status).toBe("stopped");
      expect(says.seen.filter((e) => e.body.final)).toHaveLength(state?.turn ?? 0);
    } finally {
      await store.close();
    }
  });
});

function watchEnvelopesRaw(bus: Bus, subject: string): Uint8Array[] {
  const seen: Uint8Array[] = [];
  bus.subscribe(subject, (m) => void seen.push(m.data));
  return seen;
}

describe("models per soul", () => {
  afterEach(() => dirs.cleanup());

  it("gives each soul the config's model for it, and the default to the others", async () => {
    const calls: Record<string, string[]> = { alpha: [], beta: [] };
    const counted = (name: "alpha" | "beta"): LanguageModel => {
      const inner = createOfflineModel();
      return {
        provider: name,
        complete: (request) => (calls[name].push(request.model ?? ""), inner.complete(request)),
        stream: (request) => (calls[name].push(request.model ?? ""), inner.stream(request)),
      };
    };
    const registry = new ModelRegistry().register("alpha", counted("alpha")).register("beta", counted("beta"));
    const config = parseClusterConfig({
      cluster: "models",
      souls: [
        { id: "ann", blueprint: "samantha" },
        { id: "bob", blueprint: "samantha" },
      ],
      providers: { default: "beta:small", souls: { ann: "alpha:large" } },
    });
    const node = await startNode({ config, data: dirs.make(), store: { noSync: true }, registry, log: () => undefined });
    try {
      const says = watchEnvelopes(node.bus, clusterSubjects("models").allSouls("says"), "speech");
      const toAnn = await perceive(node.bus, "ann", "hi ann");
      const toBob = await perceive(node.bus, "bob", "hi bob");
      await says.next((e) => e.body.final && e.causation === toAnn.id, 5_000, "ann's answer");
      await says.next((e) => e.body.final && e.causation === toBob.id, 5_000, "bob's answer");
      expect(calls.alpha).toEqual(["large"]);
      expect(calls.beta).toEqual(["small"]);
    } finally {
      await node.stop();
    }
  });
});

describe("daimons on the node", () => {
  afterEach(() => dirs.cleanup());

  it("runs the config's daimon beside its soul: it watches the conversation and whispers into the soul", async () => {
    const config = parseClusterConfig({
      cluster: "daimons",
      souls: [{ id: "sam", blueprint: "samantha" }],
      daimons: [{ soul: "sam", name: "Kothar", persona: "You are Kothar, brief and sardonic.", mode: "whisper", everyN: 1 }],
      providers: { default: "offline:echo" },
    });
    const node = await startNode({ config, data: dirs.make(), store: { noSync: true }, env: {}, log: () => undefined });
    try {
      const events = watchEnvelopes(node.bus, clusterSubjects("daimons").events("sam"), "event");
      await perceive(node.bus, "sam", "I had a long day at work");
      const whispered = await events.next((e) => e.body.type === "soul.whisper", 10_000, "the daimon's whisper to be kept");
      expect(whispered.body.data).toMatchObject({ source: "Kothar" });
      expect(node.status().daimons).toEqual([{ soul: "sam", name: "Kothar", mode: "whisper" }]);
    } finally {
      await node.stop();
    }
  });
});
