/**
 * How often each transition of a soul was taken over the turns its log keeps (the debugger's
 * state chart). Counted from the turns' traces, and kept per soul between requests: the page
 * asks again after every live turn, and a soul that keeps a thousand turns must not have all
 * of them read and decompressed each time. Each request reads only the entries committed
 * since the last one and drops those the log has pruned.
 */
import type { StoredTurnTrace } from "../../actors/soul/index.ts";
import type { ActorHistory, LoggedTurn } from "../store/index.ts";

interface Counted {
  turn: number;
  k: number;
  edges: string[];
}

/** The edges one logged commit took: from its process, through those it ran, to where it rests. */
function edgesOf(entry: LoggedTurn): string[] {
  const trace = entry.trace as StoredTurnTrace | undefined;
  if (entry.kind === "revert" || !trace) return [];
  const way = [trace.from, ...trace.path, entry.state.currentProcess];
  const edges: string[] = [];
  for (let i = 1; i < way.length; i++) if (way[i] !== way[i - 1]) edges.push(`${way[i - 1]}->${way[i]}`);
  return edges;
}

const after = (a: { turn: number; k: number }, b: { turn: number; k: number }) => a.turn > b.turn || (a.turn === b.turn && a.k > b.k);

export class TransitionCounts {
  readonly #bySoul = new Map<string, Counted[]>();

  of(soulId: string, history: ActorHistory): Record<string, number> {
    const { oldest, newest } = history.bounds();
    if (oldest === undefined || newest === undefined) {
      this.#bySoul.delete(soulId);
      return {};
    }
    let counted = this.#bySoul.get(soulId) ?? [];
    const last = counted[counted.length - 1];
    // Entries since the last one counted (the whole log the first time), oldest first.
    const span = last === undefined ? history.keep : Math.max(1, newest - last.turn + 1);
    const fresh = history
      .page(span, undefined, { memories: false })
      .filter((e) => last === undefined || after(e, last))
      .reverse()
      .map((e) => ({ turn: e.turn, k: e.k, edges: edgesOf(e) }));
    counted = [...counted.filter((c) => c.turn >= oldest), ...fresh];
    this.#bySoul.set(soulId, counted);
    const counts: Record<string, number> = {};
    for (const { edges } of counted) for (const edge of edges) counts[edge] = (counts[edge] ?? 0) + 1;
    return counts;
  }
}
