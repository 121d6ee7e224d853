/**
 * The bridge core on a real in-process bus and a real LMDB: a platform message becomes one
 * perception, a repeat is a duplicate, the policy's refusals are events with a reason, the
 * soul's speech reaches the sink of the conversation it answers, and a publish a crash cut
 * short is done again at the next start.
 */
import { afterAll, describe, expect, it } from "vitest";
import { BridgeRuntime, ChannelQueue, DEFAULT_POLICY, decide, EditingSink, type Conversation, type PlatformMessage, type Speech, type SpeechSink } from "../../../bridges/core/index.ts";
import { clusterSubjects, createInProcessBus, decodeDeadLetter, decodeEnvelope, encodeEnvelope, makeEnvelope, type DeadLetter, type Envelope } from "../../../runtime/bus/index.ts";
import { openStore } from "../../../runtime/store/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const subjects = clusterSubjects("b");

const message = (over: Partial<PlatformMessage> = {}): PlatformMessage => ({
  platform: "slack",
  id: "slack:T1:C1:100.1",
  channel: "C1",
  messageId: "100.1",
  direct: false,
  userId: "U1",
  userName: "Ada",
  text: "hello",
  mentioned: true,
  fromBot: false,
  ...over,
});

class RecordingSink implements SpeechSink {
  readonly finals: [Speech, Conversation][] = [];
  readonly chunks: Speech[] = [];
  chunk(s: Speech): void {
    this.chunks.push(s);
  }
  async final(s: Speech, c: Conversation): Promise<void> {
    this.finals.push([s, c]);
  }
}

function rig(data = dirs.make()) {
  const bus = createInProcessBus({ cluster: "b" });
  const store = openStore({ path: data, noSync: true });
  const runtime = new BridgeRuntime({ name: "slack-echo", type: "slack", soul: "echo", bus, subjects, store, policy: DEFAULT_POLICY, report: () => undefined });
  const seen: { perceptions: Envelope[]; events: Envelope[] } = { perceptions: [], events: [] };
  bus.subscribe(subjects.perceive("echo"), (m) => {
    const d = decodeEnvelope(m.data);
    if (d.ok) seen.perceptions.push(d.envelope);
  });
  bus.subscribe(subjects.events("echo"), (m) => {
    const d = decodeEnvelope(m.data);
    if (d.ok) seen.events.push(d.envelope);
  });
  return { bus, store, runtime, seen, close: async () => (await runtime.stop(), await bus.close(), await store.close()) };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe("decide (the policy)", () => {
  it("answers DMs and mentions, follows the soul's threads, and says why it ignores the rest", () => {
    expect(decide(DEFAULT_POLICY, message({ direct: true, mentioned: false }), false)).toMatchObject({ answer: true });
    expect(decide(DEFAULT_POLICY, message(), false)).toMatchObject({ answer: true });
    expect(decide(DEFAULT_POLICY, message({ mentioned: false, thread: "99.1" }), true)).toMatchObject({ answer: true });
    expect(decide(DEFAULT_POLICY, message({ mentioned: false, thread: "99.1" }), false)).toEqual({ answer: false, reason: "the soul is not mentioned (policy.reply is mentions)" });
    expect(decide({ ...DEFAULT_POLICY, dms: false }, message({ direct: true }), false)).toMatchObject({ answer: false, reason: expect.stringMatching(/policy\.dms/) });
    expect(decide({ ...DEFAULT_POLICY, blockChannels: ["C1"] }, message(), false)).toMatchObject({ answer: false, reason: expect.stringMatching(/blocked/) });
    expect(decide({ ...DEFAULT_POLICY, allowChannels: ["C2"] }, message(), false)).toMatchObject({ answer: false, reason: expect.stringMatching(/allowChannels/) });
    expect(decide({ ...DEFAULT_POLICY, reply: "all" }, message({ mentioned: false }), false)).toMatchObject({ answer: true });
    expect(decide(DEFAULT_POLICY, message({ fromBot: true }), false)).toMatchObject({ answer: false, reason: expect.stringMatching(/bot/) });
  });
});

describe("BridgeRuntime", () => {
  it("publishes one perception per platform message, with the platform's identity as its id", async () => {
    const r = rig();
    await r.runtime.follow(new RecordingSink());
    expect(await r.runtime.receive(message())).toEqual({ status: "published", id: "slack:T1:C1:100.1" });
    expect(await r.runtime.receive(message())).toEqual({ status: "duplicate", id: "slack:T1:C1:100.1" });
    await tick();
    expect(r.seen.perceptions).toHaveLength(1);
    expect(r.seen.perceptions[0]).toMatchObject({ id: "slack:T1:C1:100.1", from: "bridge-slack-echo", to: "echo", body: { action: "said", content: "hello", name: "Ada", meta: { platform: "slack", channel: "C1", userId: "U1", conversation: "slack:C1:" } } });
    expect(r.runtime.counters).toMatchObject({ received: 2, perceptions: 1, duplicates: 1 });
    await r.close();
  });

  it("publishes a bridge.ignored event with the reason for a message the policy ignores", async () => {
    const r = rig();
    await r.runtime.follow(new RecordingSink());
    expect(await r.runtime.receive(message({ mentioned: false }))).toMatchObject({ status: "ignored", reason: expect.stringMatching(/not mentioned/) });
    await tick();
    expect(r.seen.perceptions).toEqual([]);
    expect(r.seen.events).toEqual([expect.objectContaining({ causation: "slack:T1:C1:100.1", body: { type: "bridge.ignored", data: expect.objectContaining({ bridge: "slack-echo", channel: "C1", reason: expect.stringMatching(/not mentioned/) }) } })]);
    await r.close();
  });

  it("hands the sink the speech that answers its perceptions, in the conversation they came from", async () => {
    const r = rig();
    const sink = new RecordingSink();
    await r.runtime.follow(sink);
    await r.runtime.receive(message({ thread: "99.1" }));
    const say = (id: string, causation: string, body: { text: string; final: boolean }) =>
      r.bus.publish(subjects.says("echo"), encodeEnvelope(makeEnvelope("speech", "echo", "bridge-slack-echo", { proposalId: "echo:1:0", ...body }, { id, causation })));
    await say("echo:1:0~0", "slack:T1:C1:100.1", { text: "echo", final: false });
    await say("echo:1:0", "slack:T1:C1:100.1", { text: "echo: hello", final: true });
    await say("other:1:0", "someone-else", { text: "not ours", final: true });
    await tick();
    expect(sink.chunks.map((c) => c.text)).toEqual(["echo"]);
    expect(sink.finals).toEqual([[expect.objectContaining({ id: "echo:1:0", perception: "slack:T1:C1:100.1", text: "echo: hello", speaker: { kind: "soul" } }), { platform: "slack", channel: "C1", thread: "99.1", messageId: "100.1", direct: false }]]);
    await r.close();
  });

  it("on an in-process bus, hands the sink speech published before it followed (a turn re-run at start, while the platform still connected)", async () => {
    const data = dirs.make();
    const first = rig(data);
    await first.runtime.follow(new RecordingSink());
    await first.runtime.receive(message());
    await first.close();
    // The next start: a fresh in-process stream, and the soul's re-run turn speaks before the bridge follows.
    const second = rig(data);
    const env = makeEnvelope("speech", "echo", "bridge-slack-echo", { proposalId: "echo:1:0", text: "answered at start", final: true }, { id: "echo:1:0", causation: "slack:T1:C1:100.1" });
    await second.bus.publish(subjects.says("echo"), encodeEnvelope(env), { msgId: env.id });
    const sink = new RecordingSink();
    await second.runtime.follow(sink);
    await tick();
    expect(sink.finals.map(([s]) => s.text)).toEqual(["answered at start"]);
    await second.close();
  });

  it("dead-letters a reply the platform refuses on every try, with the reason, and keeps it no longer", async () => {
    const r = rig();
    const dead: DeadLetter[] = [];
    r.bus.subscribe(subjects.dead, (m) => void dead.push(decodeDeadLetter(m.data)!));
    const refusing = { limit: 2000, editIntervalMs: 10, post: async () => Promise.reject(new Error("Missing Access")), edit: async () => undefined };
    const hooks = { count: () => undefined, report: () => undefined, gaveUp: r.runtime.deadLetterReply.bind(r.runtime) };
    const sink = new EditingSink(refusing, r.runtime.ledger, new ChannelQueue(), hooks, { attempts: 3, retryFirstMs: 1 });
    await r.runtime.follow(sink);
    await r.runtime.receive(message());
    await r.bus.publish(subjects.says("echo"), encodeEnvelope(makeEnvelope("speech", "echo", "bridge-slack-echo", { proposalId: "echo:1:0", text: "never shown", final: true }, { id: "echo:1:0", causation: "slack:T1:C1:100.1" })));
    const until = Date.now() + 5000;
    while (dead.length === 0 && Date.now() < until) await tick();
    expect(dead).toEqual([expect.objectContaining({ subject: subjects.says("echo"), reason: "handler failed on delivery 3, the last one allowed: bridge slack-echo could not post echo:1:0 in slack channel C1: Missing Access" })]);
    expect(r.runtime.ledger.pendingReplies()).toEqual([]);
    await r.close();
  });

  it("refuses messages once its intake is closed (the platform retries), and publishes again at start what a crash cut short", async () => {
    const data = dirs.make();
    const first = rig(data);
    await first.runtime.follow(new RecordingSink());
    // As a crash right after the ledger write and before the publish leaves it.
    await first.runtime.ledger.take("slack:T1:C1:200.1", { platform: "slack", channel: "C1", messageId: "200.1", direct: true }, message({ id: "slack:T1:C1:200.1", messageId: "200.1", direct: true, text: "cut short" }));
    first.runtime.closeIntake();
    await expect(first.runtime.receive(message({ id: "slack:T1:C1:300.1" }))).rejects.toThrow(/stopping/);
    await first.close();

    const second = rig(data);
    await second.runtime.follow(new RecordingSink());
    await tick();
    expect(second.seen.perceptions.map((p) => [p.id, (p.body as { content: string }).content])).toEqual([["slack:T1:C1:200.1", "cut short"]]);
    expect(second.runtime.ledger.unpublished()).toEqual([]);
    await second.close();
  });

  it("leaves a message whose caller was told of the failure to the caller: not published at the next start, yet its answer still finds its conversation", async () => {
    const data = dirs.make();
    const first = rig(data);
    const sink = new RecordingSink();
    await first.runtime.follow(sink);
    // A publish that may have landed (its acknowledgement lost), and the caller told to retry.
    await first.runtime.ledger.take("slack:T1:C1:400.1", { platform: "slack", channel: "C1", messageId: "400.1", direct: true }, message({ id: "slack:T1:C1:400.1", messageId: "400.1", direct: true }));
    await first.runtime.retract("slack:T1:C1:400.1");
    await first.bus.publish(subjects.says("echo"), encodeEnvelope(makeEnvelope("speech", "echo", "bridge-slack-echo", { proposalId: "echo:4:0", text: "it landed", final: true }, { id: "echo:4:0", causation: "slack:T1:C1:400.1" })));
    await tick();
    expect(sink.finals.map(([s]) => s.text)).toEqual(["it landed"]);
    await first.close();

    const second = rig(data);
    await second.runtime.follow(new RecordingSink());
    await tick();
    expect(second.seen.perceptions).toEqual([]);
    // The caller's retry (the same id) publishes it again.
    expect(await second.runtime.receive(message({ id: "slack:T1:C1:400.1", messageId: "400.1", direct: true }))).toMatchObject({ status: "published" });
    await second.close();
  });
});
