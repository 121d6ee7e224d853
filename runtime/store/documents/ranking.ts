/** Turning scores into Open Souls' `similarity` (higher is closer) and ranking by vector. */
import type { TextHit } from "./TextIndex.ts";

export interface RankedKey {
  key: string;
  similarity: number;
}

/** BM25 scores have no fixed scale: similarity is the score over the search's best (1 for the best). */
export function rankedHits(hits: readonly TextHit[]): RankedKey[] {
  const best = hits[0]?.score ?? 1;
  return hits.map((h) => ({ key: h.key, similarity: best > 0 ? h.score / best : 0 }));
}

/** Cosine similarity of unit vectors, best first; vectors of another dimension are skipped. */
export function rankByVector(query: Float32Array, candidates: Iterable<[string, Float32Array]>): RankedKey[] {
  const keys: string[] = [];
  const scores: number[] = [];
  const dims = query.length;
  for (const [key, unit] of candidates) {
    if (unit.length !== dims) continue;
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += unit[i]! * query[i]!;
    keys.push(key);
    scores.push(dot);
  }
  // Sort positions by score (numbers only), then build the result once.
  const order = Uint32Array.from(keys.keys()).sort((a, b) => scores[b]! - scores[a]!);
  return Array.from(order, (i) => ({ key: keys[i]!, similarity: scores[i]! }));
}
