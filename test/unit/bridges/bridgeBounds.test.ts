/**
 * What a chat bridge keeps is bounded while it runs (real LMDB, the in-process bus): the ledger
 * is pruned every `pruneEveryMs`, not only at start, and the editing sink lets go of streams
 * that get no final (a streamed proposal a gate intercepted) past `streams.max` or `idleMs`.
 * The bounds are config, checked with a clear error.
 */
import { afterAll, describe, expect, it } from "vitest";
import { BridgeLedger, BridgeRuntime, ChannelQueue, DEFAULT_POLICY, EditingSink, type Conversation, type PlatformOutlet, type PostedRef, type Speech } from "../../../bridges/core/index.ts";
import { parseDiscordOptions } from "../../../bridges/discord/index.ts";
import { parseHttpOptions } from "../../../bridges/http/index.ts";
import { parseSlackOptions } from "../../../bridges/slack/index.ts";
import { clusterSubjects, createInProcessBus } from "../../../runtime/bus/index.ts";
import { openStore } from "../../../runtime/store/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const conv: Conversation = { platform: "discord", channel: "300", messageId: "1", direct: false };
const DAY = 24 * 3600_000;

/** A platform that takes everything (what it shows is not the point here). */
class QuietPlatform implements PlatformOutlet {
  readonly limit = 2000;
  readonly editIntervalMs = 10;
  #next = 0;
  async post(): Promise<PostedRef> {
    return { channel: "300", id: String(++this.#next) };
  }
  async edit(): Promise<void> {}
}

const piece = (id: string, text: string, chunk: number): Speech => ({ id, perception: "p", text, final: false, chunk, speaker: { kind: "soul" } });

describe("the ledger while the bridge runs", () => {
  it("is pruned every pruneEveryMs, not only at start: an entry past keepMs goes, a young one stays", async () => {
    const store = openStore({ path: dirs.make(), noSync: true });
    const bus = createInProcessBus({ cluster: "b" });
    const runtime = new BridgeRuntime({ name: "discord-echo", type: "discord", soul: "echo", bus, subjects: clusterSubjects("b"), store, policy: DEFAULT_POLICY, ledger: { keepMs: DAY, pruneEveryMs: 1_000 }, report: () => undefined });
    try {
      await runtime.follow(new EditingSink(new QuietPlatform(), runtime.ledger, new ChannelQueue(), { count: () => undefined, report: () => undefined }));
      // Written after the start's prune: as a node up for a week and a day would have them.
      await runtime.ledger.recordPost("echo:1:0", 0, { ref: { channel: "300", id: "9" }, shown: "old", at: Date.now() - 8 * DAY });
      await runtime.ledger.take("discord:old", conv);
      await runtime.ledger.recordPost("echo:2:0", 0, { ref: { channel: "300", id: "10" }, shown: "young", at: Date.now() });
      const until = Date.now() + 10_000;
      while (runtime.ledger.post("echo:1:0", 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(runtime.ledger.post("echo:1:0", 0)).toBeUndefined();
      expect(runtime.ledger.post("echo:2:0", 0)).toMatchObject({ shown: "young" });
      expect(runtime.ledger.taken("discord:old")).toMatchObject({ conversation: conv });
    } finally {
      await runtime.stop();
      await bus.close();
      await store.close();
    }
  });

  it("prunes a big ledger a page at a time, all of what is old", async () => {
    const store = openStore({ path: dirs.make(), noSync: true });
    const ledger = new BridgeLedger(store, "bridge-big");
    const old = Date.now() - 8 * DAY;
    await Promise.all(Array.from({ length: 1_234 }, (_, i) => ledger.recordPost(`s:${i}:0`, 0, { shown: "x", at: i % 2 ? old : Date.now() })));
    expect(await ledger.prune(7 * DAY)).toBe(617);
    expect(ledger.sizes().posts).toBe(617);
    await store.close();
  });
});

describe("the editing sink's streams", () => {
  function sink(options: { max?: number; idleMs?: number }) {
    const store = openStore({ path: dirs.make(), noSync: true });
    const s = new EditingSink(new QuietPlatform(), new BridgeLedger(store, "bridge-s"), new ChannelQueue(), { count: () => undefined, report: () => undefined }, options);
    return { sink: s, close: async () => (await s.close(), await store.close()) };
  }

  it("keeps at most streams.max streams that get no final (intercepted by a gate): the idlest go first", async () => {
    const { sink: s, close } = sink({ max: 10 });
    for (let i = 0; i < 50; i++) s.chunk(piece(`echo:${i}:0`, "Some words ", 0), conv);
    expect(s.streaming).toBe(10);
    await close();
  });

  it("shows at most streams.max thinking indicators: past it the oldest is taken down", async () => {
    const store = openStore({ path: dirs.make(), noSync: true });
    const shown: [string, boolean][] = [];
    const platform = Object.assign(new QuietPlatform(), { thinking: async (c: Conversation, on: boolean) => void shown.push([c.messageId, on]) });
    const s = new EditingSink(platform, new BridgeLedger(store, "bridge-t"), new ChannelQueue(), { count: () => undefined, report: () => undefined }, { max: 10 });
    for (let i = 0; i < 50; i++) s.thinking(`p${i}`, { ...conv, messageId: String(i) });
    await s.close();
    expect(shown.filter(([, on]) => !on).map(([id]) => id)).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
    await store.close();
  });

  it("lets a stream go after streams.idleMs without a piece", async () => {
    const { sink: s, close } = sink({ idleMs: 50 });
    for (let i = 0; i < 20; i++) s.chunk(piece(`echo:${i}:0`, "Some words ", 0), conv);
    expect(s.streaming).toBe(20);
    await new Promise((r) => setTimeout(r, 120));
    s.chunk(piece("echo:99:0", "Fresh ", 0), conv);
    expect(s.streaming).toBe(1);
    await close();
  });
});

describe("the bounds in the config", () => {
  it("are taken by Slack, Discord and HTTP bridges, and a bound too small is refused by name", () => {
    expect(parseDiscordOptions({ ledger: { keepMs: DAY }, streams: { max: 100 } })).toMatchObject({ ledger: { keepMs: DAY, pruneEveryMs: 3600_000 }, streams: { max: 100, idleMs: 600_000 } });
    expect(parseHttpOptions({ ledger: { keepMs: DAY } })).toMatchObject({ ledger: { keepMs: DAY, pruneEveryMs: 3600_000 } });
    expect(() => parseHttpOptions({ ledger: { pruneEveryMs: 1 } })).toThrow(/ledger\.pruneEveryMs/);
    expect(parseSlackOptions({ mode: "socket", ledger: { pruneEveryMs: 60_000 } })).toMatchObject({ ledger: { keepMs: 7 * DAY, pruneEveryMs: 60_000 } });
    expect(() => parseDiscordOptions({ ledger: { keepMs: 10 } })).toThrow(/ledger\.keepMs/);
    expect(() => parseSlackOptions({ streams: { max: 0 } })).toThrow(/streams\.max/);
  });
});
