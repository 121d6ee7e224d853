/**
 * The soul's durable writes (a whisper, a turn commit, an error mark, a schedule dropped):
 * one at a time, in the order they were asked for.
 *
 * Why its own file: the order is the whole point, and it is easier to keep right in one
 * small place than spread through the runtime. Each write counts as busy until it settles,
 * so the soul is not idle while one is under way.
 *
 * The order of a soul's perceptions and speech is kept at five points; docs/ARCHITECTURE.md
 * ("The order of a soul's perceptions and speech") says how they relate. This is one of them.
 */
const noop = () => undefined;

export class SoulWrites {
  readonly #busy: (delta: 1 | -1) => void;
  #writes: Promise<unknown> = Promise.resolve();
  #writing = 0;

  constructor(busy: (delta: 1 | -1) => void) {
    this.#busy = busy;
  }

  /** Writes asked for and not yet settled. */
  get pending(): number {
    return this.#writing;
  }

  /** Every write that touches the soul's durable state goes through here, one at a time, in order. */
  run<T>(write: () => Promise<T>): Promise<T> {
    this.#busy(1);
    // With nothing in flight there is nothing to wait for: start at once, saving a hop per turn.
    let result: Promise<T>;
    try {
      result = this.#writing === 0 ? write() : this.#writes.then(write);
    } catch (error) {
      result = Promise.reject(error);
    }
    this.#writing++;
    const settled = () => {
      this.#writing--;
      this.#busy(-1);
    };
    this.#writes = result.then(settled, settled);
    return result;
  }

  /** Resolves once every write so far has settled. */
  flushed(): Promise<void> {
    return this.#writes.then(noop, noop);
  }
}
