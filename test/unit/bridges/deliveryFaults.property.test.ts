/**
 * Each reply shown once, and whole, under faults (fast-check): streamed and long replies in two
 * channels go through a chat sink on a real LMDB ledger while a drawn schedule fails, loses the
 * acknowledgement of, or delays platform posts and edits (`bridge.post`) and ledger writes
 * (`bridge.record`). A final whose recording failed is delivered again, as the bus does. The
 * bridge stops (at once, or once all is posted), the faults clear, it restarts on the same
 * ledger (the bus delivering every final again, as after a crash), and the platform must show
 * exactly one message per part of each reply, with its final text, and nothing else. Two platforms: one that is asked for a lost
 * post (Slack's metadata), one whose post is idempotent by key (Discord's nonce).
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { BridgeLedger, ChannelQueue, EditingSink, splitText, type Conversation, type PlatformOutlet, type PostedRef, type PostKey, type Speech } from "../../../bridges/core/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { faultSchedule, withFaults } from "../../support/faults/faultArbitraries.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const LIMIT = 60;

class Platform implements PlatformOutlet {
  readonly limit = LIMIT;
  readonly editIntervalMs = 5;
  readonly messages = new Map<string, { key: PostKey; text: string }>();
  /** Slack's way: the post made before a crash is asked for. Absent for the nonce platform. */
  readonly find?: (c: Conversation, key: PostKey) => Promise<PostedRef | undefined>;
  #next = 0;
  constructor(readonly idempotent: "find" | "nonce") {
    if (idempotent === "find") this.find = async (c, key) => this.#byKey(c, key);
  }
  async post(c: Conversation, text: string, key: PostKey): Promise<PostedRef> {
    // Discord's way: the same nonce is the same message, its text brought up to date.
    const same = this.idempotent === "nonce" ? this.#byKey(c, key) : undefined;
    if (same) return (this.messages.get(same.id)!.text = text), same;
    const id = String(++this.#next);
    this.messages.set(id, { key, text });
    return { channel: c.channel, id };
  }
  async edit(ref: PostedRef, text: string): Promise<void> {
    const m = this.messages.get(ref.id);
    if (!m) throw new Error(`no message ${ref.id}`);
    m.text = text;
  }
  #byKey(c: Conversation, key: PostKey): PostedRef | undefined {
    for (const [id, m] of this.messages) if (m.key.speechId === key.speechId && m.key.part === key.part) return { channel: c.channel, id };
    return undefined;
  }
}

interface Reply {
  id: string;
  conversation: Conversation;
  pieces: string[];
  text: string;
}

const reply = fc
  .record({ channel: fc.constantFrom("C1", "C2"), words: fc.array(fc.constantFrom("alpha", "beta", "gamma.", "delta", "epsilon!"), { minLength: 1, maxLength: 40 }), streamed: fc.integer({ min: 0, max: 3 }) })
  .map(({ channel, words, streamed }): Omit<Reply, "id"> => {
    const text = words.join(" ");
    const pieces = streamed === 0 ? [] : text.split(/(?<= )/).slice(0, streamed);
    return { conversation: { platform: "slack", channel, messageId: `m-${channel}`, direct: false }, pieces, text };
  });

function sinkOn(platform: Platform, store: Store): EditingSink {
  return new EditingSink(platform, new BridgeLedger(store, "bridge-prop"), new ChannelQueue({ maxAttempts: 1 }), { count: () => undefined, report: () => undefined }, { attempts: 1_000, retryFirstMs: 1 });
}

const speech = (r: Reply, text: string, final: boolean, chunk?: number): Speech => ({ id: r.id, perception: `p-${r.id}`, text, final, speaker: { kind: "soul" }, ...(chunk !== undefined ? { chunk } : {}) });

/** As the bus does: a final whose handler failed is delivered again. */
async function deliverFinal(sink: EditingSink, r: Reply): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      return await sink.final(speech(r, r.text, true), r.conversation);
    } catch (err) {
      if (tries > 50) throw err;
    }
  }
}

describe("chat replies under faults at bridge.post and bridge.record", () => {
  it("once the faults clear and the bridge restarts, each part of each reply shows once, with its final text, and nothing else shows", async () => {
    const injected = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 4 }), faultSchedule({ points: ["bridge.post", "bridge.record"], maxRules: 4, maxNth: 8 }), fc.constantFrom("find" as const, "nonce" as const), fc.boolean(), async (drawn, rules, idempotent, stopEarly) => {
        const replies: Reply[] = drawn.map((r, i) => ({ ...r, id: `s:${i}:0` }));
        const data = dirs.make();
        const platform = new Platform(idempotent);
        let store = openStore({ path: data, noSync: true });
        await withFaults(rules, async (plan) => {
          const sink = sinkOn(platform, store);
          for (const r of replies) r.pieces.forEach((p, i) => sink.chunk(speech(r, p, false, i), r.conversation));
          await Promise.all(replies.map((r) => deliverFinal(sink, r)));
          // Stopped early, the bridge leaves what it has not posted in the ledger.
          if (!stopEarly) await sink.idle();
          await sink.close();
          for (const o of plan.injected()) injected.add(`${o.point} ${o.fault?.kind}`);
        });
        await store.close();
        // The restart: the same ledger, and the bus delivering every final again.
        store = openStore({ path: data, noSync: true });
        const sink = sinkOn(platform, store);
        await sink.resume();
        for (const r of replies) await deliverFinal(sink, r);
        await sink.idle();
        await sink.close();
        const shown = [...platform.messages.values()].map((m) => `${m.key.speechId}#${m.key.part}: ${m.text}`).sort();
        const expected = replies.flatMap((r) => splitText(r.text, LIMIT).map((text, part) => `${r.id}#${part}: ${text}`)).sort();
        expect(shown).toEqual(expected);
        expect(new BridgeLedger(store, "bridge-prop").pendingReplies()).toEqual([]);
        await store.close();
      }),
      { numRuns: Number(process.env.RUNS ?? 60) },
    );
    // The schedules did reach both points, with each kind of fault.
    expect([...injected].sort()).toEqual(["bridge.post ackLost", "bridge.post delay", "bridge.post fail", "bridge.record ackLost", "bridge.record delay", "bridge.record fail"]);
  }, 60_000);
});
