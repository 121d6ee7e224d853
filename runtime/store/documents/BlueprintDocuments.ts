/**
 * `useBlueprintStore()`'s documents: the text files of a soul's `rag/` folder, chunked by
 * heading and paragraph and ranked with BM25 (MiniSearch). Read-only, and not in LMDB: the
 * folder is the truth. It is indexed on first use and re-checked (a directory walk and a stat
 * per file) at most every `recheckMs`, so a file changed under `ensoul dev` is re-indexed at
 * the next search after it; only changed files are re-read.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { matchesFilter, type DocumentSearchOptions, type VectorRecord, type VectorRecordWithDistance } from "./documentTypes.ts";
import { rankedHits } from "./ranking.ts";
import { TextIndex } from "./TextIndex.ts";
import { DEFAULT_RESULT_LIMIT } from "./SoulDocuments.ts";

/** What is read as text; anything else in `rag/` is skipped. */
export const RAG_EXTENSIONS = [".md", ".mdx", ".txt", ".text", ".json", ".yaml", ".yml", ".csv", ".html"];
/** A chunk grows by paragraphs up to about this many characters; a heading always starts one. */
export const CHUNK_CHARS = 1200;
/** Files larger than this are skipped: `rag/` is for knowledge, not data dumps. */
export const RAG_MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface BlueprintDocuments {
  /** A chunk by key (`<file>#<n>`), or a whole file by its path relative to `rag/`. */
  get(key: string): VectorRecord | undefined;
  search(query: string | number[], options?: DocumentSearchOptions): VectorRecordWithDistance[];
  /** Keys of every chunk, in file order. */
  keys(): string[];
}

export type BlueprintStores = (ragDir: string) => BlueprintDocuments;

interface FileEntry {
  mtimeMs: number;
  size: number;
  chunks: string[];
  text: string;
}

/** Splits text at headings, then packs paragraphs into chunks of about CHUNK_CHARS. */
export function chunkText(text: string, max = CHUNK_CHARS): string[] {
  const sections = text.replace(/\r\n/g, "\n").split(/\n(?=#{1,6}\s)/);
  const chunks: string[] = [];
  for (const section of sections) {
    let current = "";
    for (const paragraph of section.split(/\n\s*\n/)) {
      const p = paragraph.trim();
      if (p === "") continue;
      if (current !== "" && current.length + p.length + 2 > max) {
        chunks.push(current);
        current = "";
      }
      current = current === "" ? p : `${current}\n\n${p}`;
    }
    if (current !== "") chunks.push(current);
  }
  return chunks;
}

class RagFolder implements BlueprintDocuments {
  readonly #dir: string;
  readonly #recheckMs: number;
  readonly #text = new TextIndex();
  readonly #files = new Map<string, FileEntry>();
  #checkedAt = -Infinity;

  constructor(dir: string, recheckMs: number) {
    this.#dir = dir;
    this.#recheckMs = recheckMs;
  }

  get(key: string): VectorRecord | undefined {
    this.#refresh();
    const file = this.#files.get(key);
    if (file) return { key, content: file.text, metadata: { file: key } };
    const at = key.lastIndexOf("#");
    const chunk = at < 0 ? undefined : this.#files.get(key.slice(0, at))?.chunks[Number(key.slice(at + 1))];
    return chunk === undefined ? undefined : { key, content: chunk, metadata: { file: key.slice(0, at), chunk: Number(key.slice(at + 1)) } };
  }

  keys(): string[] {
    this.#refresh();
    return [...this.#files].flatMap(([file, entry]) => entry.chunks.map((_, i) => `${file}#${i}`));
  }

  search(query: string | number[], options: DocumentSearchOptions = {}): VectorRecordWithDistance[] {
    if (typeof query !== "string") throw new Error("useBlueprintStore(): search takes text; vector queries need embeddings, which blueprint stores do not keep");
    this.#refresh();
    const limit = options.resultLimit ?? options.limit ?? DEFAULT_RESULT_LIMIT;
    const out: VectorRecordWithDistance[] = [];
    for (const { key, similarity } of rankedHits(this.#text.search(query))) {
      if (out.length >= limit) break;
      const distance = 1 - similarity;
      if (options.minSimilarity !== undefined && similarity < options.minSimilarity) continue;
      if (options.maxDistance !== undefined && distance > options.maxDistance) continue;
      const record = this.get(key);
      if (record && matchesFilter(record.metadata, options.filter)) out.push({ ...record, distance, similarity });
    }
    return out;
  }

  #refresh(): void {
    const now = Date.now();
    if (now - this.#checkedAt < this.#recheckMs) return;
    this.#checkedAt = now;
    const seen = new Set<string>();
    for (const path of walk(this.#dir)) {
      const name = relative(this.#dir, path).split(sep).join("/");
      let stat;
      try {
        stat = statSync(path);
      } catch {
        continue;
      }
      if (stat.size > RAG_MAX_FILE_BYTES) continue;
      seen.add(name);
      const known = this.#files.get(name);
      if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) continue;
      this.#drop(name);
      const text = readFileSync(path, "utf8");
      const chunks = chunkText(text);
      chunks.forEach((chunk, i) => this.#text.set(`${name}#${i}`, chunk));
      this.#files.set(name, { mtimeMs: stat.mtimeMs, size: stat.size, chunks, text });
    }
    for (const name of [...this.#files.keys()]) if (!seen.has(name)) this.#drop(name);
  }

  #drop(name: string): void {
    const entry = this.#files.get(name);
    if (!entry) return;
    entry.chunks.forEach((_, i) => this.#text.delete(`${name}#${i}`));
    this.#files.delete(name);
  }
}

function* walk(dir: string): Iterable<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile() && RAG_EXTENSIONS.includes(extname(entry.name).toLowerCase())) yield path;
  }
}

/** One index per folder, re-checked at most every `recheckMs` (default 500 ms). */
export function createBlueprintStores(options: { recheckMs?: number } = {}): BlueprintStores {
  const folders = new Map<string, RagFolder>();
  const recheckMs = options.recheckMs ?? 500;
  return (ragDir) => {
    let folder = folders.get(ragDir);
    if (!folder) folders.set(ragDir, (folder = new RagFolder(ragDir, recheckMs)));
    return folder;
  };
}
