/**
 * The soul store travels in the soul file: a soul with documents (some with vectors, one
 * removed) and tool-call ledger entries is exported from one data directory with `ensoul soul
 * export` and imported into another with `ensoul soul import`. There, a new node's soul store
 * (a fresh index, built from LMDB on first use) finds the documents by BM25 and by vector,
 * using the imported vectors (only the query is embedded), and the removed document stays
 * removed. A second export from the new place is the same document but for `exportedAt`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TOOL_CALLS_NAMESPACE } from "../../../actors/tool/index.ts";
import { useSoulStore } from "../../../actors/soul/index.ts";
import { soulExportCommand, soulImportCommand } from "../../../runtime/cli/soulCommand.ts";
import { createEmbeddingsProvider } from "../../../runtime/providers/index.ts";
import {
  createSoulStoreService,
  exportSoul,
  importSoul,
  openStore,
  parseSoulFile,
  serializeSoulFile,
  SOUL_STORE_META_NAMESPACE,
  SOUL_STORE_NAMESPACE,
  SOUL_STORE_VECTORS_NAMESPACE,
  type Store,
} from "../../../runtime/store/index.ts";
import { scriptedStoreSoul } from "../../support/store/scriptedStoreSoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { textSink as sink } from "../../support/textSink.ts";
import { startEmbeddingsServer, type EmbeddingsServer } from "../../support/wire/embeddingsServer.ts";

const dirs = tempDirs("ensoul-soulfile-store-");
let server: EmbeddingsServer;
const opened: Store[] = [];
beforeEach(async () => {
  server = await startEmbeddingsServer();
});
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((s) => s.close()));
  await server.close();
  dirs.cleanup();
});

function open(data: string): Store {
  const store = openStore({ path: join(data, "local"), noSync: true });
  opened.push(store);
  return store;
}

const keys = (results: { key: string }[]) => results.map((r) => r.key);

/** A soul `keeper` in `<data>/local` with four documents (one then removed), vectors for the rest, and a tool call in its ledger. */
async function seed(data: string): Promise<void> {
  const store = open(data);
  const soulStore = createSoulStoreService({ embedder: createEmbeddingsProvider({ baseUrl: server.url, model: "bow-64" }) });
  const { turn, soul } = scriptedStoreSoul(new Map(), store.actor("keeper"), { services: { soulStore } });
  await turn("load", () => {
    const docs = useSoulStore();
    docs.set("garage", "Tom keeps his car in the garage", { kind: "place" });
    docs.set("pet", "Biscuit the cat sleeps on the piano", { kind: "animal" });
    docs.set("food", "Dinner is lentil soup on Fridays", { kind: "habit" });
    docs.set("boat", "The boat is moored at pier nine", { kind: "place" });
  });
  await turn("forget", () => useSoulStore().remove("boat"));
  // A search with an embedder computes the vectors and commits them with its turn.
  expect(keys((await turn("embed", () => useSoulStore().search("automobile"))) as { key: string }[])[0]).toBe("garage");
  // The ledger of a turn in flight (turn 4 crashed after its tool call ended): what a re-run of that turn would replay.
  await store.kv("keeper", TOOL_CALLS_NAMESPACE).put(["keeper:4:tool:0"], { state: "done", tool: "clock", ts: 5, ok: true, value: "12:00" });
  await soul.stop();
  await store.close();
}

describe("the soul file carries the soul store", () => {
  it("moves documents, vectors and the tool-call ledger; the new place finds the documents by search", async () => {
    const from = dirs.make();
    await seed(from);
    const out = join(dirs.make(), "keeper.soul.json");
    const exported = sink();
    await soulExportCommand({ soul: "keeper", data: from, out, stdout: exported });
    expect(exported.text()).toMatch(/3 soul store documents/);

    // In the file: the store's namespaces as kv entries, the removed document as a null tombstone.
    const json = JSON.parse(readFileSync(out, "utf8")) as { formatVersion: number; kv: { namespace: string; key: unknown[]; value: unknown }[] };
    expect(json.formatVersion).toBe(1);
    const ns = (name: string) => json.kv.filter((e) => e.namespace === name);
    expect(ns(SOUL_STORE_NAMESPACE).map((e) => [e.key, e.value === null ? null : (e.value as { content: string }).content])).toEqual([
      [["boat"], null],
      [["food"], "Dinner is lentil soup on Fridays"],
      [["garage"], "Tom keeps his car in the garage"],
      [["pet"], "Biscuit the cat sleeps on the piano"],
    ]);
    expect(ns(SOUL_STORE_NAMESPACE)[1]?.value).toMatchObject({ metadata: { kind: "habit" }, bytes: expect.any(Number), at: expect.any(Number) });
    expect(ns(SOUL_STORE_VECTORS_NAMESPACE).map((e) => e.key[0])).toEqual(["food", "garage", "pet"]);
    expect(ns(SOUL_STORE_VECTORS_NAMESPACE)[0]?.value).toMatchObject({ model: "bow-64", hash: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), vector: expect.any(Array) });
    expect(ns(SOUL_STORE_META_NAMESPACE)).toEqual([{ namespace: SOUL_STORE_META_NAMESPACE, key: ["stamp"], value: expect.any(String) }]);
    expect(ns(TOOL_CALLS_NAMESPACE)).toEqual([{ namespace: TOOL_CALLS_NAMESPACE, key: ["keeper:4:tool:0"], value: { state: "done", tool: "clock", ts: 5, ok: true, value: "12:00" } }]);

    const to = dirs.make();
    const imported = sink();
    await soulImportCommand({ file: out, data: to, stdout: imported });
    expect(imported.text()).toMatch(/^imported soul keeper into .*: .*3 soul store documents/);

    // A node on the new data directory: a fresh soul store service, so its index is built from what the import wrote.
    const store = open(to);
    // Before any turn here (a committed turn prunes the ledger of the turns up to it).
    expect(store.kv("keeper", TOOL_CALLS_NAMESPACE).get(["keeper:4:tool:0"])).toMatchObject({ state: "done", value: "12:00" });
    const bm25 = scriptedStoreSoul(new Map(), store.actor("keeper"), { services: { soulStore: createSoulStoreService() } });
    expect(await bm25.turn("q1", async () => keys(await useSoulStore().search("lentil soup")))).toEqual(["food"]);
    expect(await bm25.turn("q2", async () => keys(await useSoulStore().search("piano cat", { filter: { kind: "animal" } })))).toEqual(["pet"]);
    expect(await bm25.turn("q3", async () => [keys(await useSoulStore().search("boat pier")), (await useSoulStore().fetch("boat")) ?? null])).toEqual([[], null]);
    const garage = (await bm25.turn("f", () => useSoulStore().fetch("garage", { includeMetadata: true }))) as { embedding?: number[] };
    expect(garage).toMatchObject({ key: "garage", content: "Tom keeps his car in the garage", metadata: { kind: "place" } });
    expect(garage.embedding).toHaveLength(64);
    await bm25.soul.stop();

    // With an embedder: the imported vectors are used as they are; only the query is embedded.
    const before = server.requests.length;
    const soulStore = createSoulStoreService({ embedder: createEmbeddingsProvider({ baseUrl: server.url, model: "bow-64" }) });
    const vectors = scriptedStoreSoul(new Map(), store.actor("keeper"), { services: { soulStore } });
    expect(((await vectors.turn("v", () => useSoulStore().search("automobile"))) as { key: string }[])[0]?.key).toBe("garage");
    expect(server.requests.slice(before).map((r) => r.input)).toEqual([["automobile"]]);
    await vectors.soul.stop();
  });

  it("exports again from the new place as the same document but for exportedAt", async () => {
    const from = dirs.make();
    await seed(from);
    const first = join(dirs.make(), "a.json");
    await soulExportCommand({ soul: "keeper", data: from, out: first, stdout: sink() });
    const to = dirs.make();
    await soulImportCommand({ file: first, data: to, stdout: sink() });
    const second = join(dirs.make(), "b.json");
    await soulExportCommand({ soul: "keeper", data: to, out: second, stdout: sink() });
    const strip = (path: string) => readFileSync(path, "utf8").replace(/"exportedAt": "[^"]*"/, "");
    expect(strip(second)).toBe(strip(first));
  });

  it("rebuilds an index a host already holds for the soul when an import replaces it", async () => {
    const data = dirs.make();
    await seed(data);
    const store = open(data);
    const text = serializeSoulFile(exportSoul(store, "keeper"));
    // One service, as a node keeps it across activations: it indexes the soul, which then changes.
    const soulStore = createSoulStoreService();
    const a = scriptedStoreSoul(new Map(), store.actor("keeper"), { services: { soulStore } });
    await a.turn("change", () => {
      useSoulStore().remove("food");
      useSoulStore().set("kite", "The red kite flies over the hill");
    });
    expect(await a.turn("q", async () => [keys(await useSoulStore().search("kite")), keys(await useSoulStore().search("lentil"))])).toEqual([["kite"], []]);
    await a.soul.stop();
    // The file from before the change replaces the soul: the stamp it brings is not the index's, so the index is rebuilt.
    await importSoul(store, parseSoulFile(text, "keeper.json"), { replace: true });
    const b = scriptedStoreSoul(new Map(), store.actor("keeper"), { services: { soulStore } });
    expect(await b.turn("q", async () => [keys(await useSoulStore().search("kite")), keys(await useSoulStore().search("lentil"))])).toEqual([[], ["food"]]);
    await b.soul.stop();
  });
});
