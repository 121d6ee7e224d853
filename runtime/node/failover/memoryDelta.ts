/**
 * A turn's working memory as its history record carries it: what changed since the record
 * before, not the whole conversation. A turn record used to hold the soul's whole working
 * memory, so replicating a turn cost as much as the conversation was long (a soul keeping 200
 * memories sent them all at every turn, and R3 stored them three times).
 *
 * Working memory changes at its ends: a turn appends, and a soul that keeps a window drops its
 * oldest. So a delta names how many memories at the front of the previous record's memories go
 * (`drop`), how many after them stay (`keep`), and what follows them (`add`). The previous
 * record is the soul's last `turn` (a snapshot, a claim or an `acked` record break the chain:
 * the turn after them carries its memories whole), so a reader applies deltas in order from
 * there. Memories compare as the store's memory log compares them (runtime/store MemoryLog).
 */
import { sameMemory, sharedPrefix, type ActorState, type TurnCommit } from "../../store/index.ts";

export interface MemoryDelta {
  drop: number;
  keep: number;
  add: unknown[];
}

/** The delta from `previous` to `next`, or undefined when none is worth sending (nothing kept). */
export function memoryDelta(previous: readonly unknown[] | undefined, next: readonly unknown[]): MemoryDelta | undefined {
  if (!previous || previous.length === 0 || next.length === 0) return undefined;
  const drop = dropped(previous, next[0]);
  if (drop < 0) return undefined;
  const keep = sharedPrefix(previous, next, drop);
  return keep === 0 ? undefined : { drop, keep, add: next.slice(keep) };
}

/** Where the next memories begin in the previous ones: by identity first, else by value (-1: nowhere). */
function dropped(previous: readonly unknown[], first: unknown): number {
  const same = previous.indexOf(first);
  if (same >= 0) return same;
  for (let i = 0; i < previous.length; i++) if (sameMemory(previous[i], first)) return i;
  return -1;
}

/** The memories a delta describes, from the previous record's. */
export function applyMemoryDelta(soulId: string, previous: readonly unknown[] | undefined, delta: MemoryDelta): unknown[] {
  const fits = previous !== undefined && Number.isInteger(delta.drop) && Number.isInteger(delta.keep) && delta.drop >= 0 && delta.keep >= 0 && delta.drop + delta.keep <= previous.length && Array.isArray(delta.add);
  if (!fits) {
    throw new Error(`soul '${soulId}': a turn of its history names memories the record before it does not have (drop ${delta.drop}, keep ${delta.keep} of ${previous?.length ?? "none"}); the history is damaged`);
  }
  return [...previous.slice(delta.drop, delta.drop + delta.keep), ...delta.add];
}

type WithMemories = Record<string, unknown> & { memories: readonly unknown[] };

function hasMemories(wm: unknown): wm is WithMemories {
  return typeof wm === "object" && wm !== null && Array.isArray((wm as { memories?: unknown }).memories);
}

/** The memories of a state's working memory, when it holds them as a list. */
export function memoriesOf(state: ActorState | undefined): readonly unknown[] | undefined {
  return hasMemories(state?.workingMemory) ? state.workingMemory.memories : undefined;
}

/** The commit as a delta record carries it: its working memory without the memories. */
export function withoutMemories(commit: TurnCommit): TurnCommit {
  const { memories: _sent, ...header } = commit.state.workingMemory as WithMemories;
  return { ...commit, state: { ...commit.state, workingMemory: header } };
}

/** The commit a delta record describes, its memories put back. */
export function withMemories(commit: TurnCommit, memories: unknown[]): TurnCommit {
  return { ...commit, state: { ...commit.state, workingMemory: { ...(commit.state.workingMemory as Record<string, unknown>), memories } } };
}
