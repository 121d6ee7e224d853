/**
 * A soak: 100,000 messages through a chat bridge's core (BridgeRuntime, its ledger in a real
 * LMDB, the EditingSink, the in-process bus) answered by a cheap echo soul, in 64 channels. Every
 * reply is streamed (one piece, posted) and then final (the draft edited); every tenth is cut
 * off by a "gate" after its piece (no final ever comes). With the bounds short (the ledger keeps
 * 5 s and is pruned every second; 100 streams at most), the heap and the LMDB file stay flat
 * after warm-up: nothing the bridge keeps grows with the number of messages.
 *
 * Inside `npm test` it takes 25,000 messages (the LMDB file's growth still shows: about 2.5 MB per
 * 5,000 messages unbounded); `npm run chaos` takes the whole 100,000.
 *
 * The echo soul is a subscriber that answers each perception on the soul's says subject as a
 * soul's outbox would (a piece, then the final): a real soul's turn would make the soak a
 * benchmark of turns, not of the bridge. The platform is an outlet that keeps nothing.
 */
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { afterAll, describe, expect, it } from "vitest";
import { BridgeRuntime, ChannelQueue, DEFAULT_POLICY, EditingSink, type PlatformMessage, type PlatformOutlet, type PostedRef } from "../../bridges/core/index.ts";
import { clusterSubjects, createInProcessBus, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope } from "../../runtime/bus/index.ts";
import { openStore } from "../../runtime/store/index.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const MESSAGES = chaosSize({ short: 25_000, full: 100_000 });
/** Past the warm-up the ledger's 5 s of entries are all there (a busy machine takes about 2,000 messages a second). */
const WARM_UP = chaosSize({ short: 10_000, full: 20_000 });
const CHECK_EVERY = chaosSize({ short: 5_000, full: 10_000 });
/** Conversations waiting for their answer at once. */
const IN_FLIGHT = 256;
const CHANNELS = 64;
const subjects = clusterSubjects("soak");

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Every tenth message's reply is stopped after its first piece, as by a gate: it never gets a final. */
const intercepted = (n: number) => n % 10 === 9;

/**
 * A platform that takes every post and edit and keeps only counts, and tells the test when a
 * message's reply shows as it will stay (its final edit, or the piece of one cut off), so the
 * test keeps a bounded number of conversations open, as people waiting for answers do.
 */
class CountingPlatform implements PlatformOutlet {
  readonly limit = 2000;
  readonly editIntervalMs = 1000;
  posts = 0;
  edits = 0;
  readonly #waiting = new Map<string, () => void>();
  async post(conversation: { messageId: string }): Promise<PostedRef> {
    this.posts++;
    if (intercepted(Number(conversation.messageId))) this.#shown(conversation.messageId);
    return { channel: "c", id: conversation.messageId };
  }
  async edit(ref: PostedRef): Promise<void> {
    this.edits++;
    this.#shown(ref.id);
  }
  async thinking(): Promise<void> {}
  /** Rejects if the reply does not show within 30 s (a lost reply fails the soak at once). */
  shown(n: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the reply to message ${n} did not show within 30 s`)), 30_000);
      this.#waiting.set(String(n), () => (clearTimeout(timer), resolve()));
    });
  }
  #shown(id: string): void {
    this.#waiting.get(id)?.();
    this.#waiting.delete(id);
  }
}

const message = (n: number): PlatformMessage => ({
  platform: "discord",
  id: `discord:${n}`,
  channel: `ch${n % CHANNELS}`,
  messageId: String(n),
  direct: false,
  userId: "u1",
  userName: "Ada",
  text: `message number ${n}`,
  mentioned: true,
  fromBot: false,
});

describe(`chaos: a chat bridge taking ${MESSAGES.toLocaleString("en-US")} messages`, () => {
  it("keeps its heap and its LMDB file flat after warm-up", async () => {
    // The stream bounded by bytes, not by age (a slow run must not lose speech): 512 KB is about
    // 2,000 messages, more than the 256 conversations waiting can have unread.
    const bus = createInProcessBus({ cluster: "soak", duplicateWindowMs: 1_000, streamMaxBytes: 512 * 2 ** 10 });
    const store = openStore({ path: dirs.make(), noSync: true });
    const errors: string[] = [];
    const report = (err: unknown, what: string) => void (errors.length < 20 && errors.push(`${what}: ${String(err)}`));
    const runtime = new BridgeRuntime({ name: "discord-echo", type: "discord", soul: "echo", bus, subjects, store, policy: DEFAULT_POLICY, ledger: { keepMs: 5_000, pruneEveryMs: 1_000 }, report });
    const platform = new CountingPlatform();
    const sink = new EditingSink(platform, runtime.ledger, new ChannelQueue(), { count: (c) => runtime.count(c), report }, { max: 100 });
    await runtime.follow(sink);

    // The echo soul: a piece, then the final, except for the intercepted.
    let turn = 0;
    const soul = bus.subscribe(subjects.perceive("echo"), async (msg) => {
      const d = decodeEnvelope(msg.data);
      if (!d.ok || !isKind(d.envelope, "perception")) return;
      const n = ++turn;
      const content = String(d.envelope.body.content);
      const say = (text: string, final: boolean, id: string) =>
        bus.publish(subjects.says("echo"), encodeEnvelope(makeEnvelope("speech", "echo", runtime.address, { proposalId: `echo:${n}:0`, text, final, ...(final ? {} : { chunk: 0 }) }, { id, causation: d.envelope.id })), { msgId: id });
      await say("echo: ", false, `echo:${n}:0~0`);
      if (!intercepted(Number(content.split(" ").at(-1)))) await say(`echo: ${content}`, true, `echo:${n}:0`);
    });

    const samples: { at: number; heapMB: number; lmdbMB: number }[] = [];
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < MESSAGES) {
        const n = next++;
        const shown = platform.shown(n);
        await runtime.receive(message(n));
        await shown;
        if ((n + 1) % CHECK_EVERY === 0) {
          gc();
          samples.push({ at: n + 1, heapMB: process.memoryUsage().heapUsed / 2 ** 20, lmdbMB: store.usedBytes() / 2 ** 20 });
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const until = Date.now() + 30_000;
    while (platform.posts < MESSAGES && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await sink.idle();
    const seconds = (performance.now() - started) / 1000;
    const sizes = runtime.ledger.sizes();
    soul.unsubscribe();
    await runtime.stop();
    await bus.close();
    await store.close();

    console.log(`soak: ${MESSAGES} messages in ${seconds.toFixed(1)} s; posts ${platform.posts}, edits ${platform.edits}; ledger at the end ${JSON.stringify(sizes)}`);
    console.log(`soak: heap MB / LMDB MB by messages: ${samples.map((s) => `${s.at / 1000}k ${s.heapMB.toFixed(1)}/${s.lmdbMB.toFixed(1)}`).join(", ")}`);
    expect(errors).toEqual([]);
    // Every message's piece posted once; every answered one edited to its final.
    expect(platform.posts).toBe(MESSAGES);
    expect(runtime.counters).toMatchObject({ received: MESSAGES, perceptions: MESSAGES, posted: MESSAGES });
    expect(sizes.replies).toBe(0);
    // The ledger holds the last few seconds (keepMs, plus up to a prune period), not every message.
    const window = ((5_000 + 1_000) / 1000) * (MESSAGES / seconds) * 1.5;
    for (const [namespace, entries] of Object.entries(sizes)) expect(entries, `ledger ${namespace} (a window is ${Math.round(window)})`).toBeLessThan(Math.min(window, MESSAGES / 2));
    // Flat: without the bounds the heap grew about 1 MB and the LMDB file about 5 MB per 10,000
    // messages (8 MB and 40 MB after this warm-up); bounded, both stay within a burst's worth.
    const after = samples.filter((s) => s.at > WARM_UP);
    const first = after[0]!;
    for (const s of after) {
      expect(s.heapMB, `heap at ${s.at} messages vs ${first.at}`).toBeLessThan(first.heapMB + 5);
      expect(s.lmdbMB, `LMDB at ${s.at} messages vs ${first.at}`).toBeLessThan(first.lmdbMB + 2);
    }
  }, chaosTimeout({ short: 180_000, full: 600_000 }));
});
