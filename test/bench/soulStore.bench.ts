/**
 * The soul store's search latency (issue 15): p50 and p95 of `search` at 1,000 and 10,000
 * documents in one soul, BM25 (MiniSearch) over real LMDB, and cosine similarity over
 * precomputed random 256-dimension vectors (what a configured embedder would have stored;
 * the query's own embedding call is not counted). Also the first search's cost, which builds
 * the index from LMDB (a restarted or newly activated soul).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  documentBytes,
  openStore,
  SoulDocumentIndex,
  SoulDocuments,
  DEFAULT_SOUL_STORE_LIMITS,
  SOUL_STORE_NAMESPACE,
  SOUL_STORE_VECTORS_NAMESPACE,
  type KvWrite,
  type StoredDocument,
} from "../../runtime/store/index.ts";
import { textHash } from "../../runtime/store/documents/SoulDocumentIndex.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

/** A vocabulary of 5,000 made-up words, drawn with a Zipf-like skew as words in real text are. */
const SYLLABLES = "ka lo mi ne ru sa ti vo be da fe gu ha ji ko la mo nu pe ri".split(" ");
const WORDS = Array.from({ length: 5000 }, (_, i) => {
  let w = "";
  for (let n = i + 7; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
});
const QUERIES = 200;
const DIMENSIONS = 256;
/** Documents per soul: text of 12 words, and the query of 3, from the vocabulary below. */

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function sentence(next: () => number, n = 12): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(next() ** 2.5 * WORDS.length)]).join(" ");
}

async function measure(count: number): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ensoul-bench-soulstore-"));
  const store = openStore({ path: dir, noSync: true });
  const actor = store.actor("bench");
  const next = rng(count);
  try {
    const writes: KvWrite[] = [];
    for (let i = 0; i < count; i++) {
      const content = `${sentence(next)} #${i}`;
      const doc: StoredDocument = { content, metadata: { i }, bytes: documentBytes(content, { i }), at: 0 };
      writes.push({ namespace: SOUL_STORE_NAMESPACE, key: [`doc-${i}`], value: doc });
      const vector = Array.from({ length: DIMENSIONS }, () => next() - 0.5);
      writes.push({ namespace: SOUL_STORE_VECTORS_NAMESPACE, key: [`doc-${i}`], value: { model: "bench", hash: textHash(content, "bench"), vector } });
    }
    await Promise.all(writes.map((w) => actor.kv(w.namespace).put(w.key, w.value)));
    const index = new SoulDocumentIndex();
    const docs = () =>
      new SoulDocuments({
        index,
        read: (ns, prefix) => actor.kv(ns).range({ prefix }),
        draft: { owner: {}, pending: () => [], push: () => undefined, now: () => 0 },
        limits: DEFAULT_SOUL_STORE_LIMITS,
        label: "bench",
      });
    const buildStart = performance.now();
    docs();
    const build = performance.now() - buildStart;
    const text: number[] = [];
    const vector: number[] = [];
    for (let q = 0; q < QUERIES + 20; q++) {
      const query = sentence(next, 3);
      const qv = Array.from({ length: DIMENSIONS }, () => next() - 0.5);
      let t = performance.now();
      await docs().search(query, { limit: 10 });
      const textMs = performance.now() - t;
      t = performance.now();
      await docs().search(qv, { limit: 10 });
      const vectorMs = performance.now() - t;
      if (q >= 20) {
        text.push(textMs);
        vector.push(vectorMs);
      }
    }
    const n = count.toLocaleString("en");
    return [
      { name: `search p50, BM25, ${n} docs`, value: percentile(text, 50), unit: "ms" },
      { name: `search p95, BM25, ${n} docs`, value: percentile(text, 95), unit: "ms" },
      { name: `search p50, vectors (${DIMENSIONS}d), ${n} docs`, value: percentile(vector, 50), unit: "ms" },
      { name: `search p95, vectors (${DIMENSIONS}d), ${n} docs`, value: percentile(vector, 95), unit: "ms" },
      { name: `index build from LMDB, ${n} docs`, value: build, unit: "ms" },
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await measure(1_000)), ...(await measure(10_000))];
}
