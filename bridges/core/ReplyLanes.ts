/**
 * Replies on their way to a platform: one lane per channel, each delivering its replies one at
 * a time in the order they came, so a reply's parts and the replies of one conversation never
 * overtake each other, while a channel the platform holds back (a 429 waited out for a minute,
 * a call hanging until its timeout) holds back only its own lane, never the bus consumer nor
 * another channel.
 *
 * A delivery that fails is tried again in its place, after a wait that doubles (`retryFirstMs`,
 * up to RETRY_MAX_MS), up to `attempts` tries; then the bridge gives up on it and says so.
 * Closed (a bridge stopping), a lane starts nothing more and waits no more: what it still holds
 * stays in the ledger, and the next start takes it up (EditingSink.resume).
 */
import type { PendingReply } from "./BridgeLedger.ts";
import { Lanes, Waits } from "./Lanes.ts";

export const DEFAULT_REPLY_ATTEMPTS = 6;
export const DEFAULT_RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export interface ReplyLanesOptions {
  /** Makes the platform show the reply whole; rejects when it did not. */
  deliver(speechId: string, reply: PendingReply): Promise<void>;
  /** A try failed and another comes in `retryInMs`. */
  failed(speechId: string, reply: PendingReply, err: unknown, retryInMs: number): void;
  /** The last try failed: the reply is not posted. */
  gaveUp(speechId: string, reply: PendingReply, err: unknown, tries: number): Promise<void>;
  attempts?: number;
  retryFirstMs?: number;
}

export class ReplyLanes {
  readonly #o: ReplyLanesOptions;
  readonly #attempts: number;
  readonly #retryFirstMs: number;
  readonly #lanes = new Lanes();
  readonly #waits = new Waits();
  /** Speech ids queued or under way: a final delivered twice by the bus is one delivery. */
  readonly #queued = new Set<string>();

  constructor(options: ReplyLanesOptions) {
    this.#o = options;
    this.#attempts = Math.max(1, options.attempts ?? DEFAULT_REPLY_ATTEMPTS);
    this.#retryFirstMs = options.retryFirstMs ?? DEFAULT_RETRY_FIRST_MS;
  }

  has(speechId: string): boolean {
    return this.#queued.has(speechId);
  }

  /** Queues the reply behind its channel's others; false when it is queued already. */
  add(speechId: string, reply: PendingReply): boolean {
    if (this.#queued.has(speechId) || this.#waits.closed) return false;
    this.#queued.add(speechId);
    void this.#lanes
      .run(reply.conversation.channel, () => this.#run(speechId, reply))
      .catch(() => undefined)
      .finally(() => this.#queued.delete(speechId));
    return true;
  }

  /** Starts nothing more; a wait before a retry ends now. */
  close(): void {
    this.#waits.close();
  }

  /** Resolves once no lane is delivering. */
  idle(): Promise<void> {
    return this.#lanes.idle();
  }

  async #run(speechId: string, reply: PendingReply): Promise<void> {
    for (let tries = 1; !this.#waits.closed; tries++) {
      try {
        await this.#o.deliver(speechId, reply);
        return;
      } catch (err) {
        // Stopping: the reply stays in the ledger, for the next start.
        if (this.#waits.closed) return;
        // Giving up reports itself (and a failure to report must not become an unhandled rejection).
        if (tries >= this.#attempts) return await this.#o.gaveUp(speechId, reply, err, tries).catch(() => undefined);
        const retryInMs = Math.min(RETRY_MAX_MS, this.#retryFirstMs * 2 ** (tries - 1));
        this.#o.failed(speechId, reply, err, retryInMs);
        await this.#waits.wait(retryInMs);
      }
    }
  }
}
