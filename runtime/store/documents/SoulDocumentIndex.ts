/**
 * The in-memory index of one soul's committed documents: BM25 text, vectors, and the totals
 * the limits count. LMDB is the truth; this is a cache of it, built on first use (so a
 * restarted or re-activated soul gets it back) and kept current without rescanning:
 *
 * - every draft that writes the store also writes a fresh stamp (`soulStoreMeta ["stamp"]`)
 *   and registers it here, with the keys it wrote marked dirty;
 * - `sync` reads the committed stamp (one LMDB get). Unchanged: the index is current. One of
 *   ours, newer than the index's: that draft committed, so the dirty keys are re-read from
 *   LMDB (a key of a draft that failed reads back as it was, which is also right) and those
 *   of drafts registered up to it are done. Anything else (a revert, an import, a write by
 *   another node that owned the soul meanwhile): the index is rebuilt from LMDB.
 *
 * A soul's drafts commit one after another (the turn, then its subprocess phase), which is
 * what lets "registered up to the committed stamp" mean "finished".
 */
import { createHash } from "node:crypto";
import type { KvReadEntry } from "../types.ts";
import {
  documentText,
  SOUL_STORE_META_NAMESPACE,
  SOUL_STORE_NAMESPACE,
  SOUL_STORE_VECTORS_NAMESPACE,
  STAMP_KEY,
  type StoredDocument,
  type StoredVector,
} from "./documentTypes.ts";
import { TextIndex } from "./TextIndex.ts";

/** Committed kv entries of the soul: `ActorStore.kvRange`, as the soul's run host reads them. */
export type CommittedReader = (namespace: string, prefix: (string | number)[]) => KvReadEntry[];

export interface IndexedVector {
  model: string;
  hash: string;
  /** Unit length, so cosine similarity is a dot product. */
  unit: Float32Array;
}

export function textHash(text: string, model: string): string {
  return createHash("sha256").update(model).update("\0").update(text).digest("base64url").slice(0, 22);
}

export function unitVector(vector: readonly number[]): Float32Array {
  const unit = Float32Array.from(vector);
  let norm = 0;
  for (const x of unit) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < unit.length; i++) unit[i] = (unit[i] as number) / norm;
  return unit;
}

export function readDocument(read: CommittedReader, key: string): StoredDocument | undefined {
  const entry = read(SOUL_STORE_NAMESPACE, [key]).find((e) => e.key.length === 1);
  return (entry?.value as StoredDocument | null | undefined) ?? undefined;
}

function readVector(read: CommittedReader, key: string): StoredVector | undefined {
  const entry = read(SOUL_STORE_VECTORS_NAMESPACE, [key]).find((e) => e.key.length === 1);
  return (entry?.value as StoredVector | null | undefined) ?? undefined;
}

export class SoulDocumentIndex {
  readonly text = new TextIndex();
  readonly vectors = new Map<string, IndexedVector>();
  /** Bytes of each live document, for the limits. */
  readonly #bytes = new Map<string, number>();
  #totalBytes = 0;
  #built = false;
  #stamp: unknown = undefined;
  #stampSeq = 0;
  #nextSeq = 1;
  readonly #own = new Map<string, number>();
  readonly #dirty = new Map<string, number>();

  get count(): number {
    return this.#bytes.size;
  }

  get totalBytes(): number {
    return this.#totalBytes;
  }

  bytesOf(key: string): number | undefined {
    return this.#bytes.get(key);
  }

  /** A draft is about to write the store under this stamp; returns its order. */
  register(stamp: string): number {
    const seq = this.#nextSeq++;
    this.#own.set(stamp, seq);
    return seq;
  }

  markDirty(key: string, seq: number): void {
    this.#dirty.set(key, Math.max(seq, this.#dirty.get(key) ?? 0));
  }

  /** Brings the index up to the committed state (see the file's comment). */
  sync(read: CommittedReader): void {
    const stamp = read(SOUL_STORE_META_NAMESPACE, [...STAMP_KEY]).find((e) => e.key.length === 1)?.value;
    if (this.#built && stamp === this.#stamp) return;
    const seq = typeof stamp === "string" ? this.#own.get(stamp) : undefined;
    if (!this.#built || seq === undefined || seq < this.#stampSeq) {
      this.#rebuild(read);
      this.#stamp = stamp;
      this.#stampSeq = seq ?? 0;
      return;
    }
    for (const [key, dirtySeq] of this.#dirty) {
      this.#reconcile(read, key);
      if (dirtySeq <= seq) this.#dirty.delete(key);
    }
    for (const [own, ownSeq] of this.#own) if (ownSeq <= seq) this.#own.delete(own);
    this.#stamp = stamp;
    this.#stampSeq = seq;
  }

  /**
   * Keeps a vector for a committed document, if it was computed from that document's current
   * content (derived data: valid whether or not the turn that computed it commits). So every
   * vector here matches its committed document, and a search need not re-check them.
   */
  putVector(key: string, stored: StoredVector): void {
    const text = this.text.textOf(key);
    if (text === undefined || stored.hash !== textHash(text, stored.model)) return;
    this.vectors.set(key, { model: stored.model, hash: stored.hash, unit: unitVector(stored.vector) });
  }

  #rebuild(read: CommittedReader): void {
    this.text.clear();
    this.vectors.clear();
    this.#bytes.clear();
    this.#totalBytes = 0;
    for (const entry of read(SOUL_STORE_NAMESPACE, [])) {
      if (entry.key.length !== 1 || entry.value === null) continue;
      this.#index(String(entry.key[0]), entry.value as StoredDocument);
    }
    for (const entry of read(SOUL_STORE_VECTORS_NAMESPACE, [])) {
      const key = String(entry.key[0]);
      if (entry.key.length === 1 && entry.value !== null && this.#bytes.has(key)) this.putVector(key, entry.value as StoredVector);
    }
    this.#built = true;
  }

  #reconcile(read: CommittedReader, key: string): void {
    const doc = readDocument(read, key);
    if (doc === undefined) {
      this.#drop(key);
      return;
    }
    this.#index(key, doc);
    const vector = readVector(read, key);
    // A vector computed meanwhile for the same content is as good as the stored one.
    if (vector && this.vectors.get(key)?.hash !== vector.hash) this.putVector(key, vector);
  }

  #index(key: string, doc: StoredDocument): void {
    const text = documentText(doc.content);
    this.text.set(key, text);
    const vector = this.vectors.get(key);
    if (vector && vector.hash !== textHash(text, vector.model)) this.vectors.delete(key);
    this.#totalBytes += doc.bytes - (this.#bytes.get(key) ?? 0);
    this.#bytes.set(key, doc.bytes);
  }

  #drop(key: string): void {
    this.text.delete(key);
    this.vectors.delete(key);
    this.#totalBytes -= this.#bytes.get(key) ?? 0;
    this.#bytes.delete(key);
  }
}
