/**
 * A daimon's whisper, kept in soul memory `daimonicWhisper` until the next successful turn
 * that answers an external perception recalls and consumes it (TurnRunner). Sanitised here,
 * whoever sent it; one that is empty once sanitised is dropped with a `whisperIgnored` event.
 * A later whisper replaces a pending one. Each is stored as a new object: the turn that
 * recalls it consumes it only if that same object is still there when it commits.
 *
 * A whisper goes through the soul's machine (so an inspector sees it), which hands it back to
 * `take`; `keep` is the caller's side, resolving once the whisper is stored.
 */
import { sanitizeWhisper, type DaimonicWhisper } from "../../runtime/cognition/index.ts";
import type { SoulEvent } from "./SoulEvent.ts";

/** As the node's whisper intake caps a whisper's source name. */
const WHISPER_SOURCE_MAX_CHARS = 128;

export interface WhisperHost {
  readonly soulId: string;
  /** Sends the whisper through the soul's machine, which calls `take` with it. */
  send(content: string, source: string): void;
  /** Writes the whisper into soul memory, after the soul's writes before it. */
  store(whisper: DaimonicWhisper): Promise<unknown>;
  emit(event: SoulEvent): void;
  commitFailed(err: unknown): void;
}

export class SoulWhispers {
  readonly #host: WhisperHost;
  /** The write of the latest whisper taken (a new promise for each): what `keep` waits for. */
  #latest: Promise<void> = Promise.resolve();

  constructor(host: WhisperHost) {
    this.#host = host;
  }

  /** The machine's side: sanitises and stores the whisper. */
  take(content: string, source: string): void {
    const host = this.#host;
    const from = sanitizeWhisper(typeof source === "string" ? source : "", { maxChars: WHISPER_SOURCE_MAX_CHARS }) || "daimon";
    const text = sanitizeWhisper(content);
    if (!text) {
      host.emit({ type: "whisperIgnored", soulId: host.soulId, source: from, reason: "the whisper is empty once sanitised" });
      this.#latest = Promise.resolve();
      return;
    }
    const write = host.store({ content: text, source: from }).then(() => host.emit({ type: "whisper", soulId: host.soulId, source: from }));
    // Reported here whoever waits for it; `keep` hands the failure on to its caller.
    write.catch((err: unknown) => host.commitFailed(err));
    this.#latest = write;
  }

  /**
   * Sends the whisper through the machine and resolves once it is stored, or at once when it
   * is ignored (empty once sanitised). Rejects when its commit failed: a whisper that is not
   * in the store is not kept, and its sender must know.
   */
  keep(content: string, source: string): Promise<void> {
    const before = this.#latest;
    this.#host.send(content, source);
    if (this.#latest === before) return Promise.reject(new Error(`soul '${this.#host.soulId}' did not take the whisper; it was not kept`));
    return this.#latest;
  }
}
