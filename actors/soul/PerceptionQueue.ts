/**
 * The perceptions a soul has waiting behind the running one, as its machine's context holds
 * them: an immutable queue whose enqueue, dequeue and head replacement each take constant time.
 *
 * Why not an array: XState replaces context instead of editing it, so an array queue is
 * copied on every arrival and every departure, which is quadratic in a burst; and every
 * inspector snapshot would carry every waiting perception. Here each version shares its cells
 * with the versions before it: a cell's `next` is set once, by the first enqueue after it, and
 * a version reads only its own `length` cells, so an older version never sees what was added
 * after it. Extending an older version again (which the machine never does, since each
 * transition starts from the latest context) copies that version's cells first, so it stays
 * correct, only slower.
 *
 * An inspector (and JSON) sees the count and the first few ids, not the perceptions.
 */
import type { Perception } from "../vocabulary/index.ts";

interface Cell {
  readonly perception: Perception;
  next: Cell | null;
}

/** Ids an inspector is shown of the waiting perceptions, first in line first. */
const SHOWN_IDS = 3;

export class PerceptionQueue implements Iterable<Perception> {
  static readonly empty = new PerceptionQueue(null, null, 0);

  readonly #first: Cell | null;
  readonly #last: Cell | null;
  readonly #length: number;
  #array: readonly Perception[] | undefined;

  private constructor(first: Cell | null, last: Cell | null, length: number) {
    this.#first = first;
    this.#last = last;
    this.#length = length;
  }

  static of(perceptions: Iterable<Perception>): PerceptionQueue {
    let queue = PerceptionQueue.empty;
    for (const perception of perceptions) queue = queue.enqueue(perception);
    return queue;
  }

  get length(): number {
    return this.#length;
  }

  /** The perception first in line. */
  get head(): Perception | undefined {
    return this.#first?.perception;
  }

  enqueue(perception: Perception): PerceptionQueue {
    const cell: Cell = { perception, next: null };
    const last = this.#last;
    if (last === null) return new PerceptionQueue(cell, cell, 1);
    if (last.next !== null) {
      // A later version took this tail already: this one branches, on cells of its own.
      return PerceptionQueue.of(this).enqueue(perception);
    }
    last.next = cell;
    return new PerceptionQueue(this.#first, cell, this.#length + 1);
  }

  /** Everything behind the head. */
  dequeue(): PerceptionQueue {
    const first = this.#first;
    if (first === null || this.#length === 1) return PerceptionQueue.empty;
    return new PerceptionQueue(first.next, this.#last, this.#length - 1);
  }

  /** The same queue with another perception first in line. */
  replaceHead(perception: Perception): PerceptionQueue {
    const first = this.#first;
    if (first === null) return PerceptionQueue.empty.enqueue(perception);
    if (this.#length === 1) {
      const cell: Cell = { perception, next: null };
      return new PerceptionQueue(cell, cell, 1);
    }
    return new PerceptionQueue({ perception, next: first.next }, this.#last, this.#length);
  }

  *[Symbol.iterator](): Iterator<Perception> {
    let cell = this.#first;
    for (let i = 0; i < this.#length && cell !== null; i++, cell = cell.next) yield cell.perception;
  }

  /** The waiting perceptions in order; built once per version, on first request. */
  toArray(): readonly Perception[] {
    return (this.#array ??= Object.freeze([...this]));
  }

  /** What an inspector and a persisted snapshot show: how many wait, and which come next. */
  toJSON(): { length: number; next: string[] } {
    const next: string[] = [];
    let cell = this.#first;
    for (let i = 0; i < Math.min(SHOWN_IDS, this.#length) && cell !== null; i++, cell = cell.next) next.push(cell.perception.id);
    return { length: this.#length, next };
  }
}
