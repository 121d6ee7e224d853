/**
 * The ids a WebSocket connection follows the speech of: the `max` most recently added, so a
 * connection open for weeks holds no more than that (the oldest is let go first).
 */
export class RecentIds {
  readonly #ids = new Set<string>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.#ids.size;
  }

  add(id: string): void {
    this.#ids.delete(id);
    this.#ids.add(id);
    if (this.#ids.size > this.max) this.#ids.delete(this.#ids.values().next().value as string);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  delete(id: string): void {
    this.#ids.delete(id);
  }
}
