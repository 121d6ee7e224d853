/**
 * A soul's long-term store of documents (`useSoulStore`): the records it keeps in LMDB, the
 * limits on them, and the embedder that gives them vectors. The records live in three kv
 * namespaces of the soul's keyspace and are written by the turn's commit (KvWrite), never
 * directly, so a turn that throws leaves none of them behind.
 */

/** JSON, as Open Souls' `Json`: what a document's content and metadata may hold. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export type DocumentMetadata = Record<string, Json>;

/** Documents: `[key]` → StoredDocument, or `null` once removed (a tombstone; KvWrite has no delete). */
export const SOUL_STORE_NAMESPACE = "soulStore";
/** Vectors: `[key]` → StoredVector, derived from a document's content (recomputed when missing). */
export const SOUL_STORE_VECTORS_NAMESPACE = "soulStoreVectors";
/** `["stamp"]` → the id of the last draft that wrote the store: tells a cached index whether it is current. */
export const SOUL_STORE_META_NAMESPACE = "soulStoreMeta";
export const STAMP_KEY = ["stamp"] as const;

export interface StoredDocument {
  content: Json;
  metadata: DocumentMetadata;
  /** The embedding model the writer asked for (Open Souls' `set(key, value, metadata, model)`). */
  model?: string;
  /** Encoded size (JSON bytes of content and metadata), what the byte limit counts. */
  bytes: number;
  /** Epoch ms of the write. */
  at: number;
}

export interface StoredVector {
  model: string;
  /** Hash of the text it was computed from: a vector of older content is ignored. */
  hash: string;
  vector: number[];
}

/** Open Souls' record shape. */
export interface VectorRecord {
  key: string;
  content: Json;
  metadata: DocumentMetadata;
  embedding?: number[];
}

export interface VectorRecordWithDistance extends VectorRecord {
  /** 1 - similarity. */
  distance: number;
  /** Cosine similarity with vectors; with BM25, the score over the best score of the search (1 for the best). */
  similarity: number;
}

export interface DocumentSearchOptions {
  /** Metadata equality: every key given must equal the document's (deep JSON equality). */
  filter?: DocumentMetadata;
  /** Open Souls' name for `limit`; default 10. */
  resultLimit?: number;
  limit?: number;
  maxDistance?: number;
  minSimilarity?: number;
  /** The embedding model for a string query. */
  model?: string;
}

/** Computes embeddings: one vector per text, in order (runtime/providers embeddings.ts speaks OpenAI's format). */
export interface Embedder {
  /** The default model, when a document or a search names none. */
  readonly model: string;
  embed(texts: string[], model?: string): Promise<number[][]>;
}

/** Per-soul limits on its store; `set` past one throws SoulStoreLimitError and the turn writes nothing. */
export interface SoulStoreLimits {
  /** Live documents (default 50,000). */
  maxDocuments: number;
  /** Sum of the documents' `bytes` (default 64 MiB). */
  maxBytes: number;
  /** One document's `bytes` (default 256 KiB). */
  maxDocumentBytes: number;
  /** Characters of a key (default 512). */
  maxKeyLength: number;
}

export const DEFAULT_SOUL_STORE_LIMITS: Readonly<SoulStoreLimits> = Object.freeze({
  maxDocuments: 50_000,
  maxBytes: 64 * 1024 * 1024,
  maxDocumentBytes: 256 * 1024,
  maxKeyLength: 512,
});

export class SoulStoreLimitError extends Error {
  readonly limit: keyof SoulStoreLimits;
  constructor(limit: keyof SoulStoreLimits, message: string) {
    super(message);
    this.name = "SoulStoreLimitError";
    this.limit = limit;
  }
}

/** The text a document is indexed by: its content as a string, or its JSON. */
export function documentText(content: Json): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

export function documentBytes(content: Json, metadata: DocumentMetadata): number {
  return Buffer.byteLength(JSON.stringify(content) ?? "null") + Buffer.byteLength(JSON.stringify(metadata));
}

/** Deep JSON equality for metadata filters. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function matchesFilter(metadata: DocumentMetadata, filter: DocumentMetadata | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, v]) => sameJson(metadata[k], v));
}
