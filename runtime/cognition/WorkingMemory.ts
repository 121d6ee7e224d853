import { DEFAULT_REGION, regionOf, toMemory, type InputMemory, type Memory } from "./Memory.ts";

/** The plain-data form of a WorkingMemory, for LMDB and the wire. */
export interface SerializedWorkingMemory {
  soulName: string;
  memories: Memory[];
  regionOrder: string[];
}

export interface WorkingMemoryInit {
  soulName: string;
  memories?: readonly InputMemory[];
  regionOrder?: readonly string[];
}

type Resolved = { memories: readonly Memory[]; regionOrder: readonly string[] };

/**
 * Immutable working memory with Open Souls semantics: every method returns a new instance.
 *
 * A memory returned by a streaming cognitive step is *pending* until its stream ends.
 * Transformations on a pending memory chain onto it (so a process can keep building on it
 * while speech streams out); reading its contents before `finished` settles is an error,
 * because the answer is not in it yet.
 */
export class WorkingMemory {
  readonly soulName: string;
  #state?: Resolved;
  #pending?: Promise<WorkingMemory>;
  #failure?: unknown;

  constructor(init: WorkingMemoryInit) {
    this.soulName = init.soulName;
    const regionOrder = Object.freeze([...(init.regionOrder ?? [])]);
    const memories = Object.freeze(ordered((init.memories ?? []).map(toMemory), regionOrder));
    this.#state = { memories, regionOrder };
  }

  /** A memory whose contents arrive later (streaming steps). */
  static pending(soulName: string, settle: Promise<WorkingMemory>): WorkingMemory {
    const wm = new WorkingMemory({ soulName });
    wm.#state = undefined;
    wm.#pending = settle.then(
      (resolved) => {
        wm.#state = resolved.#resolved();
        return resolved;
      },
      (err: unknown) => {
        wm.#failure = err;
        throw err;
      },
    );
    // The failure is reported through `finished`; do not let it surface as unhandled here.
    wm.#pending.catch(() => undefined);
    return wm;
  }

  static fromJSON(data: SerializedWorkingMemory): WorkingMemory {
    return new WorkingMemory({ soulName: data.soulName, memories: data.memories, regionOrder: data.regionOrder });
  }

  /** Resolves when every pending stream that feeds this memory has ended. */
  get finished(): Promise<void> {
    if (!this.#pending) return Promise.resolve();
    return this.#pending.then(() => undefined);
  }

  get isPending(): boolean {
    return this.#state === undefined;
  }

  get memories(): readonly Memory[] {
    return this.#resolved().memories;
  }

  get regionOrder(): readonly string[] {
    return this.#resolved().regionOrder;
  }

  get length(): number {
    return this.memories.length;
  }

  at(index: number): Memory | undefined {
    return this.memories.at(index);
  }

  find(predicate: (memory: Memory, index: number) => boolean): Memory | undefined {
    return this.memories.find(predicate);
  }

  some(predicate: (memory: Memory, index: number) => boolean): boolean {
    return this.memories.some(predicate);
  }

  /** Appends a memory; with a regional order set, it joins the end of its own region. */
  withMemory(memory: InputMemory): WorkingMemory {
    return this.#derive((s) => ({ ...s, memories: ordered([...s.memories, toMemory(memory)], s.regionOrder) }));
  }

  /** An inner thought, as the soul's own assistant-role memory. */
  withMonologue(content: string): WorkingMemory {
    return this.withMemory({ role: "assistant", content });
  }

  /**
   * Replaces the region's memories. A region that is new goes before the first memory of
   * the default region, so context regions stay ahead of the conversation.
   */
  withRegion(region: string, ...memories: InputMemory[]): WorkingMemory {
    return this.#derive((s) => {
      const incoming = memories.map((m) => toMemory({ ...m, region }));
      const at = s.memories.findIndex((m) => regionOf(m) === region);
      const rest = s.memories.filter((m) => regionOf(m) !== region);
      let insertAt: number;
      if (at >= 0) {
        insertAt = s.memories.slice(0, at).filter((m) => regionOf(m) !== region).length;
      } else {
        const firstDefault = rest.findIndex((m) => regionOf(m) === DEFAULT_REGION);
        insertAt = firstDefault >= 0 ? firstDefault : rest.length;
      }
      const next = [...rest.slice(0, insertAt), ...incoming, ...rest.slice(insertAt)];
      return { ...s, memories: s.regionOrder.length ? orderByRegion(next, s.regionOrder) : next };
    });
  }

  /** Orders memories by region; regions not named keep their relative place after the named ones. */
  withRegionalOrder(...regionOrder: string[]): WorkingMemory {
    return this.#derive((s) => ({ regionOrder, memories: orderByRegion(s.memories, regionOrder) }));
  }

  withoutRegions(...regions: string[]): WorkingMemory {
    const drop = new Set(regions);
    return this.filter((m) => !drop.has(regionOf(m)));
  }

  withOnlyRegions(...regions: string[]): WorkingMemory {
    const keep = new Set(regions);
    return this.filter((m) => keep.has(regionOf(m)));
  }

  slice(start?: number, end?: number): WorkingMemory {
    return this.#derive((s) => ({ ...s, memories: s.memories.slice(start, end) }));
  }

  filter(predicate: (memory: Memory, index: number) => boolean): WorkingMemory {
    return this.#derive((s) => ({ ...s, memories: s.memories.filter(predicate) }));
  }

  map(fn: (memory: Memory, index: number) => InputMemory): WorkingMemory {
    return this.#derive((s) => ({ ...s, memories: ordered(s.memories.map((m, i) => toMemory(fn(m, i))), s.regionOrder) }));
  }

  async asyncMap(fn: (memory: Memory, index: number) => Promise<InputMemory>): Promise<WorkingMemory> {
    await this.finished;
    const s = this.#resolved();
    const mapped = await Promise.all(s.memories.map(fn));
    return this.#replace({ ...s, memories: ordered(mapped.map(toMemory), s.regionOrder) });
  }

  concat(other: WorkingMemory | readonly InputMemory[]): WorkingMemory {
    return this.#derive((s) => {
      const more = other instanceof WorkingMemory ? other.memories : other.map(toMemory);
      const next = [...s.memories, ...more];
      return { ...s, memories: s.regionOrder.length ? orderByRegion(next, s.regionOrder) : next };
    });
  }

  prepend(memories: WorkingMemory | readonly InputMemory[]): WorkingMemory {
    return this.#derive((s) => {
      const before = memories instanceof WorkingMemory ? memories.memories : memories.map(toMemory);
      const next = [...before, ...s.memories];
      return { ...s, memories: s.regionOrder.length ? orderByRegion(next, s.regionOrder) : next };
    });
  }

  /** Plain data that round-trips through msgpack or JSON with no loss. */
  toJSON(): SerializedWorkingMemory {
    const s = this.#resolved();
    return {
      soulName: this.soulName,
      memories: s.memories.map((m) => ({ ...m })),
      regionOrder: [...s.regionOrder],
    };
  }

  #resolved(): Resolved {
    if (this.#state) return this.#state;
    if (this.#failure !== undefined) throw this.#failure;
    throw new Error(
      `WorkingMemory of ${this.soulName} is still streaming: await memory.finished before reading it`,
    );
  }

  #replace(state: Resolved): WorkingMemory {
    const wm = new WorkingMemory({ soulName: this.soulName });
    // Every caller hands over arrays it just built (or ones already frozen), so freezing them
    // in place keeps instances immutable without a second copy on every step of every turn.
    wm.#state = { memories: Object.freeze(state.memories), regionOrder: Object.freeze(state.regionOrder) };
    return wm;
  }

  #derive(change: (state: Resolved) => Resolved): WorkingMemory {
    if (this.#state) return this.#replace(change(this.#state));
    const base = this.#pending as Promise<WorkingMemory>;
    return WorkingMemory.pending(
      this.soulName,
      base.then((resolved) => resolved.#replace(change(resolved.#resolved()))),
    );
  }
}

/** Keeps the regional order, once one is set, through changes that may add or move memories. */
function ordered(memories: readonly Memory[], order: readonly string[]): readonly Memory[] {
  return order.length ? orderByRegion(memories, order) : memories;
}

function orderByRegion(memories: readonly Memory[], order: readonly string[]): Memory[] {
  const rank = new Map(order.map((r, i) => [r, i] as const));
  const unranked = order.length;
  // Array.prototype.sort is stable, so memories keep their order inside a region and
  // unnamed regions keep their relative order after the named ones.
  return [...memories].sort((a, b) => (rank.get(regionOf(a)) ?? unranked) - (rank.get(regionOf(b)) ?? unranked));
}
