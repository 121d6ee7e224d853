/**
 * One soul's store of documents as a turn sees it: the committed documents (through the
 * cached SoulDocumentIndex) with the turn's own pending writes over them, so a turn reads
 * its own writes. Writes go to the turn's draft as kv writes and land with its commit.
 *
 * Embeddings are computed lazily, at search time: a `set` stays synchronous and never waits
 * for a provider. A search with a string query and an embedder embeds the query and any
 * document still without a vector for its current content (at most `EMBED_BATCH` per search),
 * keeps those vectors in the index at once, and writes them into the turn's draft, so they
 * commit with the turn. A provider failure loses nothing: the documents stay BM25-searchable,
 * are listed in `missingVectors`, and are tried again by the next search.
 */
import { randomUUID } from "node:crypto";
import type { KvWrite } from "../types.ts";
import {
  documentBytes,
  documentText,
  matchesFilter,
  SOUL_STORE_META_NAMESPACE,
  SOUL_STORE_NAMESPACE,
  SOUL_STORE_VECTORS_NAMESPACE,
  SoulStoreLimitError,
  STAMP_KEY,
  type DocumentMetadata,
  type DocumentSearchOptions,
  type Embedder,
  type Json,
  type SoulStoreLimits,
  type StoredDocument,
  type StoredVector,
  type VectorRecord,
  type VectorRecordWithDistance,
} from "./documentTypes.ts";
import { readDocument, textHash, unitVector, type CommittedReader, type SoulDocumentIndex } from "./SoulDocumentIndex.ts";
import { rankByVector, rankedHits, type RankedKey } from "./ranking.ts";

/** Where a turn's writes go: its draft. `owner` identifies the draft (one stamp per draft). */
export interface DocumentsDraft {
  readonly owner: object;
  pending(namespace: string): readonly KvWrite[];
  push(write: KvWrite): void;
  now(): number;
}

export const DEFAULT_RESULT_LIMIT = 10;
/** Documents embedded per search at most, so one search after a bulk load is not unbounded. */
export const EMBED_BATCH = 256;

const stamps = new WeakMap<object, { stamp: string; seq: number }>();

export class SoulDocuments {
  readonly #index: SoulDocumentIndex;
  readonly #read: CommittedReader;
  readonly #draft: DocumentsDraft;
  readonly #limits: SoulStoreLimits;
  readonly #embedder: Embedder | undefined;
  readonly #label: string;
  /** Keys whose vector the last search could not compute. */
  missingVectors: string[] = [];

  constructor(init: { index: SoulDocumentIndex; read: CommittedReader; draft: DocumentsDraft; limits: SoulStoreLimits; embedder?: Embedder; label: string }) {
    this.#index = init.index;
    this.#read = init.read;
    this.#draft = init.draft;
    this.#limits = init.limits;
    this.#embedder = init.embedder;
    this.#label = init.label;
    this.#index.sync(this.#read);
  }

  /** The document as the turn sees it. */
  get(key: string): StoredDocument | undefined {
    const pending = this.#overlay().get(key);
    if (pending !== undefined) return pending ?? undefined;
    return readDocument(this.#read, key);
  }

  record(key: string, doc: StoredDocument, withEmbedding: boolean): VectorRecord {
    const record: VectorRecord = { key, content: doc.content, metadata: doc.metadata };
    if (!withEmbedding) return record;
    // The vector as the provider gave it (the index keeps it normalised), for the current content only.
    const stored = this.#read(SOUL_STORE_VECTORS_NAMESPACE, [key]).find((e) => e.key.length === 1)?.value as StoredVector | null | undefined;
    const pending = this.#draft.pending(SOUL_STORE_VECTORS_NAMESPACE).filter((w) => w.key[0] === key).at(-1)?.value as StoredVector | undefined;
    const vector = pending ?? stored ?? undefined;
    if (vector && vector.hash === textHash(documentText(doc.content), vector.model)) record.embedding = vector.vector;
    return record;
  }

  set(key: string, content: Json, metadata: DocumentMetadata = {}, model?: string): void {
    this.#checkKey(key);
    const bytes = documentBytes(content, metadata);
    const limits = this.#limits;
    if (bytes > limits.maxDocumentBytes) {
      throw new SoulStoreLimitError("maxDocumentBytes", `${this.#label}: document '${key}' is ${bytes} bytes, over the limit of ${limits.maxDocumentBytes} bytes per document (maxDocumentBytes)`);
    }
    const { count, total } = this.#totals();
    const had = this.get(key);
    const nextCount = count + (had ? 0 : 1);
    const nextTotal = total - (had?.bytes ?? 0) + bytes;
    if (nextCount > limits.maxDocuments) {
      throw new SoulStoreLimitError("maxDocuments", `${this.#label}: the soul's store is full: ${count} documents, the limit is ${limits.maxDocuments} (maxDocuments); remove some or raise the limit`);
    }
    if (nextTotal > limits.maxBytes) {
      throw new SoulStoreLimitError("maxBytes", `${this.#label}: the soul's store is full: ${nextTotal} bytes would pass the limit of ${limits.maxBytes} bytes (maxBytes); remove some or raise the limit`);
    }
    const doc: StoredDocument = { content, metadata, bytes, at: this.#draft.now() };
    if (model !== undefined) doc.model = model;
    this.#write(SOUL_STORE_NAMESPACE, key, doc);
  }

  remove(key: string): void {
    this.#checkKey(key);
    if (this.get(key) === undefined) return;
    this.#write(SOUL_STORE_NAMESPACE, key, null);
  }

  async search(query: string | number[], options: DocumentSearchOptions = {}): Promise<VectorRecordWithDistance[]> {
    const limit = options.resultLimit ?? options.limit ?? DEFAULT_RESULT_LIMIT;
    let ranked: RankedKey[];
    if (Array.isArray(query)) ranked = this.#rankByVector(unitVector(query), options.model);
    else if (this.#embedder) ranked = await this.#searchEmbedded(query, options.model);
    else ranked = this.#rankByText(query);
    const out: VectorRecordWithDistance[] = [];
    for (const { key, similarity } of ranked) {
      if (out.length >= limit) break;
      const distance = 1 - similarity;
      if (options.minSimilarity !== undefined && similarity < options.minSimilarity) continue;
      if (options.maxDistance !== undefined && distance > options.maxDistance) continue;
      const doc = this.get(key);
      if (!doc || !matchesFilter(doc.metadata, options.filter)) continue;
      out.push({ ...this.record(key, doc, false), distance, similarity });
    }
    return out;
  }

  async createEmbedding(content: string, model?: string): Promise<number[]> {
    if (!this.#embedder) throw new Error(`${this.#label}: createEmbedding() needs an embeddings provider (set ENSOUL_EMBEDDINGS_URL and ENSOUL_EMBEDDINGS_MODEL)`);
    const [vector] = await this.#embedder.embed([content], model);
    if (!vector) throw new Error(`${this.#label}: the embeddings provider returned no vector`);
    return vector;
  }

  #rankByText(query: string): RankedKey[] {
    const overlay = new Map<string, string | null>();
    for (const [key, doc] of this.#overlay()) overlay.set(key, doc === null ? null : documentText(doc.content));
    return rankedHits(this.#index.text.searchWith(query, overlay));
  }

  /** Vector ranking first; then documents without a vector, by BM25, so none is unreachable. */
  async #searchEmbedded(query: string, model?: string): Promise<RankedKey[]> {
    const embedder = this.#embedder as Embedder;
    let queryVector: number[] | undefined;
    try {
      [queryVector] = await embedder.embed([query], model);
    } catch {
      queryVector = undefined;
    }
    if (!queryVector) return this.#rankByText(query);
    await this.#embedMissing(model ?? embedder.model);
    const byVector = this.#rankByVector(unitVector(queryVector), model ?? embedder.model);
    const seen = new Set(byVector.map((r) => r.key));
    const missing = new Set(this.missingVectors);
    const byText = this.#rankByText(query).filter((r) => !seen.has(r.key) && missing.has(r.key));
    return [...byVector, ...byText.map((r) => ({ key: r.key, similarity: r.similarity * (byVector.at(-1)?.similarity ?? 1) }))];
  }

  #rankByVector(query: Float32Array, model?: string): RankedKey[] {
    return rankByVector(query, this.#liveVectors(model));
  }

  /** The vectors of the documents the turn sees, each for its current content (a generator: no copy per search). */
  *#liveVectors(model?: string): Generator<[string, Float32Array]> {
    const overlay = this.#overlay();
    // Committed documents: the index holds only vectors of their current content.
    for (const [key, vector] of this.#index.vectors) {
      if (!overlay.has(key) && (model === undefined || vector.model === model)) yield [key, vector.unit];
    }
    for (const [key, doc] of overlay) {
      if (!doc) continue;
      const vector = this.#pendingVector(key, doc, model);
      if (vector) yield [key, vector];
    }
  }

  /** A vector for a document the turn wrote: computed in this turn, or the committed one if the content is the same. */
  #pendingVector(key: string, doc: StoredDocument, model?: string): Float32Array | undefined {
    const text = documentText(doc.content);
    const fits = (v: { model: string; hash: string }) => (model === undefined || v.model === model) && v.hash === textHash(text, v.model);
    const own = this.#draft.pending(SOUL_STORE_VECTORS_NAMESPACE).filter((w) => w.key[0] === key).at(-1)?.value as StoredVector | undefined;
    if (own && fits(own)) return unitVector(own.vector);
    const committed = this.#index.vectors.get(key);
    return committed && fits(committed) ? committed.unit : undefined;
  }

  async #embedMissing(model: string): Promise<void> {
    const todo: { key: string; text: string; hash: string }[] = [];
    const overlay = this.#overlay();
    const check = (key: string, doc: StoredDocument) => {
      const text = documentText(doc.content);
      const docModel = doc.model ?? model;
      const hash = textHash(text, docModel);
      if (docModel === model) todo.push({ key, text, hash });
    };
    for (const [key, doc] of overlay) if (doc && !this.#pendingVector(key, doc, model)) check(key, doc);
    for (const key of this.#index.text.keys()) {
      if (overlay.has(key) || this.#index.vectors.get(key)?.model === model) continue;
      const doc = readDocument(this.#read, key);
      if (doc) check(key, doc);
    }
    this.missingVectors = todo.map((t) => t.key);
    const batch = todo.slice(0, EMBED_BATCH);
    if (batch.length === 0) return;
    let vectors: number[][];
    try {
      vectors = await (this.#embedder as Embedder).embed(batch.map((t) => t.text), model);
    } catch {
      return;
    }
    batch.forEach((t, i) => {
      const vector = vectors[i];
      if (!vector) return;
      const stored: StoredVector = { model, hash: t.hash, vector };
      this.#index.putVector(t.key, stored);
      this.#write(SOUL_STORE_VECTORS_NAMESPACE, t.key, stored);
    });
    const done = new Set(batch.filter((_, i) => vectors[i]).map((t) => t.key));
    this.missingVectors = this.missingVectors.filter((k) => !done.has(k));
  }

  #totals(): { count: number; total: number } {
    let count = this.#index.count;
    let total = this.#index.totalBytes;
    for (const [key, doc] of this.#overlay()) {
      const committed = this.#index.bytesOf(key);
      if (committed !== undefined) {
        count--;
        total -= committed;
      }
      if (doc) {
        count++;
        total += doc.bytes;
      }
    }
    return { count, total };
  }

  /** The turn's own document writes, the last per key (null: removed). */
  #overlay(): Map<string, StoredDocument | null> {
    const out = new Map<string, StoredDocument | null>();
    for (const w of this.#draft.pending(SOUL_STORE_NAMESPACE)) out.set(String(w.key[0]), w.value as StoredDocument | null);
    return out;
  }

  #write(namespace: string, key: string, value: unknown): void {
    let mine = stamps.get(this.#draft.owner);
    if (!mine) {
      const stamp = randomUUID();
      mine = { stamp, seq: this.#index.register(stamp) };
      stamps.set(this.#draft.owner, mine);
    }
    this.#index.markDirty(key, mine.seq);
    this.#draft.push({ namespace, key: [key], value });
    // Written after every store write of the draft, so the commit's last word is this draft's stamp.
    this.#draft.push({ namespace: SOUL_STORE_META_NAMESPACE, key: [...STAMP_KEY], value: mine.stamp });
  }

  #checkKey(key: string): void {
    if (typeof key !== "string" || key === "" || key.length > this.#limits.maxKeyLength || /[\u0000-\u001f\u007f]/.test(key)) {
      throw new Error(`${this.#label}: invalid key ${JSON.stringify(key)}: must be 1-${this.#limits.maxKeyLength} characters without control characters`);
    }
  }
}
