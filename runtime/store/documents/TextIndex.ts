/**
 * Full-text ranking with MiniSearch (BM25+ scoring, its default), over documents identified
 * by key. It keeps each document's indexed text so a change can `remove` the exact old entry
 * (MiniSearch removes by the same field values), instead of `discard`ing and vacuuming.
 */
import MiniSearch from "minisearch";

interface IndexedDoc {
  id: string;
  text: string;
}

export interface TextHit {
  key: string;
  score: number;
}

export class TextIndex {
  readonly #search = new MiniSearch<IndexedDoc>({ fields: ["text"], idField: "id" });
  readonly #texts = new Map<string, string>();

  get size(): number {
    return this.#texts.size;
  }

  has(key: string): boolean {
    return this.#texts.has(key);
  }

  keys(): IterableIterator<string> {
    return this.#texts.keys();
  }

  textOf(key: string): string | undefined {
    return this.#texts.get(key);
  }

  /** Indexes `text` under `key`, replacing what the key had. */
  set(key: string, text: string): void {
    const old = this.#texts.get(key);
    if (old === text) return;
    if (old !== undefined) this.#search.remove({ id: key, text: old });
    this.#search.add({ id: key, text });
    this.#texts.set(key, text);
  }

  delete(key: string): void {
    const old = this.#texts.get(key);
    if (old === undefined) return;
    this.#search.remove({ id: key, text: old });
    this.#texts.delete(key);
  }

  clear(): void {
    this.#search.removeAll();
    this.#texts.clear();
  }

  /** Every matching key, best first (terms combined with OR, the last one also as a prefix). */
  search(query: string): TextHit[] {
    return this.#search
      .search(query, { combineWith: "OR", prefix: (term, i, terms) => i === terms.length - 1 && term.length > 2 })
      .map((r) => ({ key: String(r.id), score: r.score }));
  }

  /**
   * Searches as if `overlay` were applied (a turn's own writes, not yet committed), then puts
   * the index back. Synchronous, so no other search sees the overlay.
   */
  searchWith(query: string, overlay: ReadonlyMap<string, string | null>): TextHit[] {
    if (overlay.size === 0) return this.search(query);
    const saved = new Map<string, string | undefined>();
    for (const [key, text] of overlay) {
      saved.set(key, this.#texts.get(key));
      if (text === null) this.delete(key);
      else this.set(key, text);
    }
    try {
      return this.search(query);
    } finally {
      for (const [key, text] of saved) {
        if (text === undefined) this.delete(key);
        else this.set(key, text);
      }
    }
  }
}
