/**
 * useSoulStore(): documents written with the turn, read back by the turn that wrote them,
 * ranked with BM25 (MiniSearch), kept across a reopen of the store, bounded by limits.
 */
import { describe, expect, it } from "vitest";
import { createMemoryActorStore, useSoulStore } from "../../../actors/soul/index.ts";
import { parseClusterConfig } from "../../../runtime/node/index.ts";
import { createSoulStoreService, DEFAULT_SOUL_STORE_LIMITS, SOUL_STORE_NAMESPACE } from "../../../runtime/store/index.ts";
import { scriptedStoreSoul, type Step } from "../../support/store/scriptedStoreSoul.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

const CORPUS: Record<string, string> = {
  tea: "Ada drinks green tea every morning before work",
  cat: "The cat is called Biscuit and sleeps on the piano",
  bike: "Tom repairs old bicycles in his garage on weekends",
  birthday: "Ada's birthday is on the third of March",
  piano: "Ada practises the piano every evening; she is learning Chopin",
  garden: "The garden has tomatoes, basil and a lemon tree",
};

const keys = (results: { key: string }[]) => results.map((r) => r.key);

describe("useSoulStore", () => {
  it("ranks a small corpus with BM25: known answers first", async () => {
    const { turn } = scriptedStoreSoul(new Map<string, Step>(), stores.open({ noSync: true }).actor("s"));
    await turn("load", () => {
      const store = useSoulStore();
      for (const [key, text] of Object.entries(CORPUS)) store.set(key, text, { topic: key });
    });
    const search = async (q: string, opts = {}) => (await turn(`q:${q}:${JSON.stringify(opts)}`, async () => keys(await useSoulStore().search(q, opts)))) as string[];
    expect((await search("when is the birthday"))[0]).toBe("birthday");
    expect((await search("bicycles garage"))[0]).toBe("bike");
    expect((await search("cat name"))[0]).toBe("cat");
    // "piano" is in two documents; the one about practising it is the better match for "practise piano".
    expect(await search("piano practises")).toEqual(["piano", "cat"]);
    expect(await search("piano", { limit: 1 })).toHaveLength(1);
    expect(await search("piano", { resultLimit: 1 })).toHaveLength(1);
    expect(await search("piano", { filter: { topic: "cat" } })).toEqual(["cat"]);
    expect(await search("submarine")).toEqual([]);
    const best = (await turn("scores", () => useSoulStore().search("Ada tea"))) as { key: string; similarity: number; distance: number; content: string; metadata: unknown }[];
    expect(best[0]).toMatchObject({ key: "tea", similarity: 1, distance: 0, content: CORPUS["tea"], metadata: { topic: "tea" } });
    expect(best.every((r, i) => i === 0 || r.similarity <= best[i - 1]!.similarity)).toBe(true);
  });

  it("reads its own writes in the turn, and a turn that throws writes nothing", async () => {
    const steps = new Map<string, Step>();
    const actor = stores.open({ noSync: true }).actor("s");
    const { turn, log } = scriptedStoreSoul(steps, actor);
    const seen = await turn("write", async () => {
      const store = useSoulStore();
      store.set("fact", "the boat is moored at pier nine", { source: "Ada" });
      return [await store.fetch("fact"), store.get("fact", { includeMetadata: true }), keys(await store.search("boat pier"))];
    });
    expect(seen).toEqual(["the boat is moored at pier nine", { key: "fact", content: "the boat is moored at pier nine", metadata: { source: "Ada" } }, ["fact"]]);
    await expect(
      turn("fail", async () => {
        const store = useSoulStore();
        store.set("ghost", "a ghost document about the boat");
        store.remove("fact");
        expect(keys(await store.search("boat"))).toEqual(["ghost"]);
        throw new Error("turn fails after writing");
      }),
    ).rejects.toThrow(/turn fails/);
    expect(log.errors().at(-1)).toMatch(/turn fails/);
    expect(await turn("after", async () => [await useSoulStore().fetch("ghost"), keys(await useSoulStore().search("boat"))])).toEqual([null, ["fact"]]);
    // Removed, then committed: gone from fetch and from search.
    await turn("remove", () => useSoulStore().delete("fact"));
    expect(await turn("gone", async () => [useSoulStore().get("fact") ?? null, keys(await useSoulStore().search("boat"))])).toEqual([null, []]);
    expect(actor.kv(SOUL_STORE_NAMESPACE).get("fact")).toBeNull();
  });

  it("keeps documents across a reopen of the store, and its index comes back", async () => {
    const first = stores.open({ noSync: true });
    const a = scriptedStoreSoul(new Map(), first.actor("s"));
    await a.turn("load", () => {
      for (const [key, text] of Object.entries(CORPUS)) useSoulStore().set(key, text);
    });
    await a.soul.stop();
    await first.close();
    const second = stores.open({ noSync: true });
    const b = scriptedStoreSoul(new Map(), second.actor("s"));
    expect(await b.turn("q", async () => keys(await useSoulStore().search("lemon tree"))[0])).toBe("garden");
    expect(await b.turn("f", () => useSoulStore().fetch("tea"))).toBe(CORPUS["tea"]);
  });

  it("keeps one service's index current across soul runtimes (passivation) and outside writes", async () => {
    const store = stores.open({ noSync: true });
    const soulStore = createSoulStoreService();
    const a = scriptedStoreSoul(new Map(), store.actor("s"), { services: { soulStore } });
    await a.turn("one", () => useSoulStore().set("one", "alpha document"));
    await a.soul.stop();
    const b = scriptedStoreSoul(new Map(), store.actor("s"), { services: { soulStore } });
    await b.turn("two", () => useSoulStore().set("two", "alpha beta document"));
    expect(await b.turn("q", async () => keys(await useSoulStore().search("alpha")).sort())).toEqual(["one", "two"]);
    // A write the index did not see (an import, a revert): the stamp differs, so it rebuilds.
    await store.kv("s", SOUL_STORE_NAMESPACE).put("three", { content: "alpha gamma", metadata: {}, bytes: 13, at: 0 });
    await store.kv("s", "soulStoreMeta").put("stamp", "from-outside");
    expect(await b.turn("q2", async () => keys(await useSoulStore().search("gamma")))).toEqual(["three"]);
  });

  it("refuses a write past a limit with an error naming it, and the turn writes nothing", async () => {
    const soulStore = createSoulStoreService({ limits: { maxDocuments: 3, maxDocumentBytes: 200 } });
    const { turn } = scriptedStoreSoul(new Map(), createMemoryActorStore("s"), { services: { soulStore } });
    await turn("fill", () => ["a", "b"].forEach((k) => useSoulStore().set(k, `doc ${k}`)));
    await expect(turn("over", () => ["c", "d"].forEach((k) => useSoulStore().set(k, `doc ${k}`)))).rejects.toThrow(/store is full: 3 documents, the limit is 3 \(maxDocuments\)/);
    expect(await turn("count", async () => keys(await useSoulStore().search("doc")).sort())).toEqual(["a", "b"]);
    await expect(turn("big", () => useSoulStore().set("big", "x".repeat(500)))).rejects.toThrow(/over the limit of 200 bytes per document \(maxDocumentBytes\)/);
    // Replacing a document does not count it twice.
    await turn("replace", () => ["a", "b", "c"].forEach((k) => useSoulStore().set(k, `new ${k}`)));
    await expect(turn("key", () => useSoulStore().set("", "x"))).rejects.toThrow(/invalid key/);
  });

  it("takes per-soul limits, from a cluster config's souls[].soulStore", () => {
    const config = parseClusterConfig({ souls: [{ id: "a", blueprint: "samantha", soulStore: { maxDocuments: 2 } }, { id: "b", blueprint: "samantha" }] });
    const byId = new Map(config.souls.map((s) => [s.id, s]));
    const service = createSoulStoreService({ limits: { maxBytes: 1000 }, limitsOf: (id) => byId.get(id)?.soulStore });
    expect(service.limitsOf("a")).toEqual({ ...DEFAULT_SOUL_STORE_LIMITS, maxBytes: 1000, maxDocuments: 2 });
    expect(service.limitsOf("b")).toEqual({ ...DEFAULT_SOUL_STORE_LIMITS, maxBytes: 1000 });
    expect(() => parseClusterConfig({ souls: [{ id: "a", blueprint: "samantha", soulStore: { maxDocuments: 0 } }] })).toThrow(/maxDocuments/);
    expect(() => createSoulStoreService({ limits: { maxBytes: -1 } })).toThrow(/maxBytes must be a positive integer/);
  });
});
