/**
 * The soul store's vector path against a local server that speaks OpenAI's embeddings format:
 * vectors computed at search time and committed with the turn, similarity search that finds
 * what BM25 cannot, and a provider failure that loses no document.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useSoulStore } from "../../../actors/soul/index.ts";
import { createEmbeddingsProvider, embeddingsFromEnv } from "../../../runtime/providers/index.ts";
import { createSoulStoreService, SOUL_STORE_VECTORS_NAMESPACE } from "../../../runtime/store/index.ts";
import { scriptedStoreSoul } from "../../support/store/scriptedStoreSoul.ts";
import { tempStores } from "../../support/store/tempStore.ts";
import { bagOfWords, startEmbeddingsServer, type EmbeddingsServer } from "../../support/wire/embeddingsServer.ts";

const stores = tempStores();
let server: EmbeddingsServer;
beforeEach(async () => {
  server = await startEmbeddingsServer();
});
afterEach(() => server.close());

const keys = (results: { key: string }[]) => results.map((r) => r.key);

describe("useSoulStore with embeddings", () => {
  it("speaks the OpenAI embeddings format, with the key as a bearer token, configured from the environment", async () => {
    const provider = embeddingsFromEnv({ ENSOUL_EMBEDDINGS_URL: server.url, ENSOUL_EMBEDDINGS_MODEL: "bow-64", ENSOUL_EMBEDDINGS_API_KEY: "sk-test" });
    expect(await provider!.embed(["a car", "a cat"])).toEqual([bagOfWords("a car"), bagOfWords("a cat")]);
    expect(server.requests[0]).toEqual({ model: "bow-64", input: ["a car", "a cat"], authorization: "Bearer sk-test" });
    expect(embeddingsFromEnv({})).toBeUndefined();
    expect(() => embeddingsFromEnv({ ENSOUL_EMBEDDINGS_URL: server.url })).toThrow(/ENSOUL_EMBEDDINGS_MODEL/);
    server.failing = true;
    await expect(provider!.embed(["x"])).rejects.toThrow(/answered 500/);
  });

  it("ranks by cosine similarity, commits the vectors with the turn, and survives a provider failure", async () => {
    const embedder = createEmbeddingsProvider({ baseUrl: server.url, model: "bow-64" });
    const soulStore = createSoulStoreService({ embedder });
    const first = stores.open({ noSync: true });
    const actor = first.actor("s");
    const { turn, soul } = scriptedStoreSoul(new Map(), actor, { services: { soulStore } });
    await turn("load", () => {
      const store = useSoulStore();
      store.set("garage", "Tom keeps his car in the garage");
      store.set("pet", "Biscuit the cat sleeps on the piano");
      store.set("food", "Dinner is lentil soup on Fridays");
    });
    // "automobile" is not in any document: BM25 finds nothing, vectors fold it into "car".
    const found = (await turn("q", async () => (await useSoulStore().search("automobile")).map((r) => [r.key, Number(r.similarity.toFixed(3))]))) as [string, number][];
    expect(found[0]![0]).toBe("garage");
    expect(found[0]![1]).toBeGreaterThan(found[1]![1]);
    expect(keys((await turn("k", () => useSoulStore().search("kitten", { limit: 1 }))) as { key: string }[])).toEqual(["pet"]);
    // The vectors were committed with the search's turn.
    expect(actor.kv(SOUL_STORE_VECTORS_NAMESPACE).range().map((e) => e.key[0]).sort()).toEqual(["food", "garage", "pet"]);
    // A vector as the query, and fetch with the record's embedding.
    const byVector = (await turn("v", async () => keys(await useSoulStore().search(bagOfWords("lentil soup"))))) as string[];
    expect(byVector[0]).toBe("food");
    const record = (await turn("f", () => useSoulStore().fetch("food", { includeMetadata: true }))) as { embedding: number[] };
    expect(record.embedding).toHaveLength(64);

    // The provider fails: a new document is kept, and found by BM25 (also when the query cannot be embedded).
    server.failing = true;
    await turn("add", () => useSoulStore().set("boat", "The boat is moored at pier nine"));
    expect(keys((await turn("q2", () => useSoulStore().search("pier nine"))) as { key: string }[])).toEqual(["boat"]);
    server.failing = false;
    const asked = server.requests.length;
    expect(keys((await turn("q3", () => useSoulStore().search("boat moored"))) as { key: string }[])[0]).toBe("boat");
    // Only the query and the one document that lacked a vector were embedded.
    expect(server.requests.slice(asked).map((r) => r.input)).toEqual([["boat moored"], ["The boat is moored at pier nine"]]);
    await soul.stop();
    await first.close();

    // After a restart the vectors come from LMDB: only the query is embedded.
    const second = stores.open({ noSync: true });
    const again = scriptedStoreSoul(new Map(), second.actor("s"), { services: { soulStore: createSoulStoreService({ embedder }) } });
    const before = server.requests.length;
    expect(keys((await again.turn("q4", () => useSoulStore().search("vehicle"))) as { key: string }[])[0]).toBe("garage");
    expect(server.requests.slice(before).map((r) => r.input)).toEqual([["vehicle"]]);
  });
});
