/**
 * Perceptions whose source keeps them until it is told to acknowledge them (the node's
 * JetStream consumer), taken by a soul without an inbox write first.
 *
 * Why: recording a perception in the inbox before acting costs an LMDB commit on the path of
 * every turn, and for such a source it buys nothing: until the acknowledgement the source
 * redelivers the perception after a crash anyway. So the turn's own commit records it in the
 * inbox (done, in the same transaction), and the source acknowledges it then.
 *
 * The order guarantee needs one rule. A held perception is not in the inbox, so if a later
 * one went into the inbox ahead of it, a crash would replay the later one first (from the
 * inbox) and the held one after it (redelivered). So when a perception arrives that takes
 * the inbox path while one is held, the held one is written to the inbox first
 * (`demote`), in its place in line, and acknowledged once it is there.
 *
 * A soul holds at most MAX_HELD at once; past that they take the inbox path, so a soul
 * with a long queue and slow turns does not keep the server's unacknowledged window for
 * itself.
 *
 * The order of a soul's perceptions and speech is kept at five points; docs/ARCHITECTURE.md
 * ("The order of a soul's perceptions and speech") says how they relate. This is one of them.
 */
import type { Perception } from "../vocabulary/index.ts";
import type { InboxRecord } from "../../runtime/store/index.ts";

export const MAX_HELD = 16;

interface Held {
  perception: Perception;
  /** Written to the inbox since: its turn marks that entry done, as for any other. */
  demoted: boolean;
  settled: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/** The soul stopped before it processed a held perception: its source redelivers it later. */
export class HeldPerceptionReleased extends Error {
  constructor(soulId: string, perceptionId: string, why: string) {
    super(`soul '${soulId}' released perception ${perceptionId} unprocessed (${why}); its source delivers it again`);
    this.name = "HeldPerceptionReleased";
  }
}

export class HeldPerceptions {
  readonly #held = new Map<string, Held>();
  readonly #soulId: string;
  readonly #busy: (delta: 1 | -1) => void;

  constructor(soulId: string, busy: (delta: 1 | -1) => void) {
    this.#soulId = soulId;
    this.#busy = busy;
  }

  get size(): number {
    return this.#held.size;
  }

  /** The settlement of a perception held now (and not yet in the inbox). */
  settlement(id: string): Promise<void> | undefined {
    const held = this.#held.get(id);
    return held && !held.demoted ? held.settled : undefined;
  }

  hold(perception: Perception): Promise<void> {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const settled = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Only the source awaits it; a rejection it has not yet awaited is not unhandled.
    settled.catch(() => undefined);
    const held: Held = { perception, demoted: false, settled, resolve, reject };
    this.#held.set(perception.id, held);
    this.#busy(1);
    return settled;
  }

  /** What its commit must record in the inbox (`inboxRecord`): set while it is held and not in the inbox. */
  recordOf(id: string): InboxRecord | undefined {
    const held = this.#held.get(id);
    return held !== undefined && !held.demoted ? { id, perception: held.perception } : undefined;
  }

  /** Its turn committed, or its failure was recorded: the source may acknowledge it. */
  settle(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    this.#held.delete(id);
    held.resolve();
    this.#busy(-1);
  }

  /** It cannot be recorded or processed here now: the source must deliver it again. */
  release(id: string, error: unknown): void {
    const held = this.#held.get(id);
    if (!held) return;
    this.#held.delete(id);
    held.reject(error);
    this.#busy(-1);
  }

  /** Every held perception goes back to its source (the soul stopped, expired or failed). */
  releaseAll(why: string): void {
    for (const id of [...this.#held.keys()]) this.release(id, new HeldPerceptionReleased(this.#soulId, id, why));
  }

  /**
   * Writes every held perception not yet in the inbox to it, in the order they were taken,
   * before a later perception goes there. Their writes are queued now, synchronously, so
   * they precede the later one's. Each is acknowledged once its entry is written; its turn
   * then marks the entry done.
   */
  demote(receive: (perception: Perception) => Promise<boolean>): void {
    for (const [id, held] of this.#held) {
      if (held.demoted) continue;
      held.demoted = true;
      receive(held.perception).then(
        () => this.settle(id),
        (error: unknown) => {
          // Not in the inbox after all: its commit records it, and it stays held until then.
          held.demoted = false;
          void error;
        },
      );
    }
  }
}
