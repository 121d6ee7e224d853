/**
 * Speech on a chat platform, against an in-memory platform: the first piece posted at once,
 * later pieces edit it at a bounded rate, the final replaces it and splits; each part is
 * posted once, also after a crash between posting and recording (real LMDB ledger).
 */
import { afterAll, describe, expect, it } from "vitest";
import { BridgeLedger, ChannelQueue, EditingSink, RateLimitedError, splitText, type Conversation, type PlatformOutlet, type PostedRef, type PostKey, type Speech } from "../../../bridges/core/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const conv: Conversation = { platform: "slack", channel: "C1", messageId: "100.1", direct: false };
const speech = (text: string, final: boolean, id = "s:1:0"): Speech => ({ id, perception: "p1", text, final, speaker: { kind: "soul" } });

class FakePlatform implements PlatformOutlet {
  readonly limit: number;
  readonly editIntervalMs: number;
  readonly messages = new Map<string, { text: string; key: PostKey; edits: number }>();
  readonly thinkingLog: boolean[] = [];
  rateLimitPosts = 0;
  #next = 1;
  constructor(limit = 100, editIntervalMs = 40) {
    this.limit = limit;
    this.editIntervalMs = editIntervalMs;
  }
  async post(_c: Conversation, text: string, key: PostKey): Promise<PostedRef> {
    if (this.rateLimitPosts > 0) {
      this.rateLimitPosts--;
      throw new RateLimitedError("429", 5);
    }
    const id = String(this.#next++);
    this.messages.set(id, { text, key, edits: 0 });
    return { channel: "C1", id };
  }
  async edit(ref: PostedRef, text: string): Promise<void> {
    const m = this.messages.get(ref.id)!;
    m.text = text;
    m.edits++;
  }
  async find(_c: Conversation, key: PostKey): Promise<PostedRef | undefined> {
    for (const [id, m] of this.messages) if (m.key.speechId === key.speechId && m.key.part === key.part) return { channel: "C1", id };
    return undefined;
  }
  async thinking(_c: Conversation, on: boolean): Promise<void> {
    this.thinkingLog.push(on);
  }
  texts(): string[] {
    return [...this.messages.values()].map((m) => m.text);
  }
}

function rig(platform = new FakePlatform(), store?: Store) {
  const s = store ?? openStore({ path: dirs.make(), noSync: true });
  const ledger = new BridgeLedger(s, "bridge-test");
  const counts: Record<string, number> = {};
  const errors: string[] = [];
  const sink = new EditingSink(platform, ledger, new ChannelQueue({ sleep: async () => undefined }), {
    count: (c) => void (counts[c] = (counts[c] ?? 0) + 1),
    report: (err, what) => errors.push(`${what}: ${String(err)}`),
  });
  return { platform, ledger, sink, counts, errors, store: s };
}

const until = async (check: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("EditingSink", () => {
  it("posts the first piece at once, edits at most once per interval, and ends with the final text", async () => {
    const { platform, sink, counts, store } = rig();
    sink.thinking("p1", conv);
    sink.chunk(speech("Hello. ", false), conv);
    await until(() => platform.messages.size === 1);
    expect(platform.texts()).toEqual(["Hello. "]);
    for (const piece of ["How ", "are ", "you ", "today? "]) sink.chunk(speech(piece, false), conv);
    await sink.final(speech("Hello. How are you today?", true), conv);
    await sink.idle();
    expect(platform.texts()).toEqual(["Hello. How are you today?"]);
    // Four pieces within one interval: at most one edit for them, plus the final's.
    expect(platform.messages.get("1")!.edits).toBeLessThanOrEqual(2);
    expect(counts["posted"]).toBe(1);
    expect(platform.thinkingLog).toEqual([true, false]);
    await sink.close();
    await store.close();
  });

  it("splits a long final into further messages, each posted once even when delivered again", async () => {
    const { platform, sink, store } = rig();
    const long = `${"word ".repeat(30)}\n\n${"more ".repeat(30)}`;
    await sink.final(speech(long, true, "s:2:0"), conv);
    await sink.idle();
    const parts = platform.messages.size;
    expect(parts).toBe(splitText(long, 100).length);
    expect(parts).toBeGreaterThan(2);
    await sink.final(speech(long, true, "s:2:0"), conv);
    await sink.idle();
    expect(platform.messages.size).toBe(parts);
    expect(platform.texts().every((t) => t.length <= 100)).toBe(true);
    await sink.close();
    await store.close();
  });

  it("after a crash between posting and recording, finds the post instead of posting again", async () => {
    const data = dirs.make();
    const platform = new FakePlatform();
    let store = openStore({ path: data, noSync: true });
    // The post reached the platform, the ledger holds only the intent: a crash in between.
    await new BridgeLedger(store, "bridge-test").recordPost("s:3:0", 0, { shown: "Partial", at: Date.now() });
    await platform.post(conv, "Partial", { speechId: "s:3:0", part: 0, speaker: { kind: "soul" } });
    await store.close();
    store = openStore({ path: data, noSync: true });
    const { sink, counts } = rig(platform, store);
    await sink.final(speech("Partial, then whole.", true, "s:3:0"), conv);
    await sink.idle();
    expect(platform.texts()).toEqual(["Partial, then whole."]);
    expect(counts["recovered"]).toBe(1);
    expect(counts["posted"]).toBeUndefined();
    await sink.close();
    await store.close();
  });

  it("after a restart mid-utterance, pieces that come without those before them are not shown: the draft waits for the final", async () => {
    const data = dirs.make();
    const platform = new FakePlatform();
    let store = openStore({ path: data, noSync: true });
    // Before the restart: the draft showed the first pieces, its reference recorded.
    const ref = await platform.post(conv, "Hello. How are ", { speechId: "s:5:0", part: 0, speaker: { kind: "soul" } });
    await new BridgeLedger(store, "bridge-test").recordPost("s:5:0", 0, { ref, shown: "Hello. How are ", at: Date.now() });
    await store.close();
    store = openStore({ path: data, noSync: true });
    const { sink } = rig(platform, store);
    // The bus delivers again only what was not acknowledged: pieces 2 and 3 of four.
    sink.chunk({ ...speech("you ", false, "s:5:0"), chunk: 2 }, conv);
    sink.chunk({ ...speech("today?", false, "s:5:0"), chunk: 3 }, conv);
    await new Promise((r) => setTimeout(r, 100));
    expect(platform.texts()).toEqual(["Hello. How are "]);
    await sink.final(speech("Hello. How are you today?", true, "s:5:0"), conv);
    await sink.idle();
    expect(platform.texts()).toEqual(["Hello. How are you today?"]);
    await sink.close();
    await store.close();
  });

  it("waits out a rate limit and posts once; ignores a chunk that arrives after its final", async () => {
    const platform = new FakePlatform();
    platform.rateLimitPosts = 2;
    const { sink, store } = rig(platform);
    await sink.final(speech("After the wait.", true, "s:4:0"), conv);
    await sink.idle();
    sink.chunk(speech("late piece. ", false, "s:4:0"), conv);
    await new Promise((r) => setTimeout(r, 20));
    expect(platform.texts()).toEqual(["After the wait."]);
    await sink.close();
    await store.close();
  });
});
