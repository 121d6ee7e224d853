/**
 * The HTTP bridge's speech, as events a client can resume: every chunk and final answering a
 * perception made through this bridge, numbered in LMDB (the number is the SSE `id:`), so a
 * client that reconnects with `Last-Event-ID` gets what it missed, also across a restart.
 * A final is logged once per speech id: the bus redelivering it after a crash adds nothing.
 *
 * Bounded: the log keeps the last `keep` events (at most a tenth more between two prunes), and
 * the once-per-speech record of a final goes with its event, so a node up for months holds no
 * more than that. A final redelivered after its event was pruned (`keep` events later) would be
 * logged again: the bus redelivers only what was in flight at a crash, long before.
 */
import type { KvNamespace, Store } from "../../runtime/store/index.ts";
import type { Conversation, Speech, SpeechSink } from "../core/index.ts";

/** What a client is sent: a piece or the whole of an utterance, or that the soul's turn for a perception failed. */
export type SpeechEvent = {
  /** Position in the log: the SSE event id. */
  seq: number;
  /** The perception it answers. */
  perception: string;
} & (
  | {
      event: "chunk" | "final";
      /** The speech id. */
      id: string;
      text: string;
      /** A daimon speaking, by name; absent for the soul. */
      daimon?: string;
    }
  | {
      /** The soul will not answer the perception: its turn failed (docs/HTTP.md). */
      event: "failed";
      /** Why, in one line. */
      reason: string;
    }
);

/** What a client reads of an event (SSE `data`, a WebSocket frame's fields): a speech's id, perception and text, or a failure's perception and reason. */
export function speechEventData(e: SpeechEvent): Record<string, string> {
  if (e.event === "failed") return { perception: e.perception, reason: e.reason };
  return { id: e.id, perception: e.perception, text: e.text, ...(e.daimon !== undefined ? { daimon: e.daimon } : {}) };
}

type LoggedEvent = SpeechEvent extends infer E ? (E extends SpeechEvent ? Omit<E, "seq"> : never) : never;

type Listener = (event: SpeechEvent) => void;

export const DEFAULT_SPEECH_LOG_KEEP = 10_000;
/** Appends between two prunes, at most: a prune reads what it removes, so not at every append. */
const MAX_PRUNE_EVERY = 1_000;

export interface SpeechLogOptions {
  /** Events kept (default DEFAULT_SPEECH_LOG_KEEP). */
  keep?: number;
  /** Where a write that failed is told (it is never left unhandled). */
  report?(err: unknown, what: string): void;
  /** An answer went out: its final is logged, for every client to read (the bridge's `posted`). Once per speech. */
  posted?(): void;
}

export class SpeechLog implements SpeechSink {
  readonly #events: KvNamespace<LoggedEvent>;
  readonly #finals: KvNamespace<number>;
  readonly #listeners = new Set<Listener>();
  readonly #keep: number;
  readonly #pruneEvery: number;
  readonly #report: (err: unknown, what: string) => void;
  readonly #posted: () => void;
  #last: number;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(store: Store, actorId: string, options: SpeechLogOptions = {}) {
    this.#events = store.kv(actorId, "speech");
    this.#finals = store.kv(actorId, "speech-finals");
    this.#keep = options.keep ?? DEFAULT_SPEECH_LOG_KEEP;
    this.#pruneEvery = Math.max(1, Math.min(MAX_PRUNE_EVERY, Math.ceil(this.#keep / 10)));
    this.#report = options.report ?? (() => undefined);
    this.#posted = options.posted ?? (() => undefined);
    const last = this.#events.range({ reverse: true, limit: 1 })[0];
    this.#last = last ? Number(last.key[0]) : 0;
  }

  get last(): number {
    return this.#last;
  }

  /** Events after `seq`, oldest first (at most `limit`). */
  since(seq: number, limit?: number): SpeechEvent[] {
    return this.#events.range({ start: seq + 1, ...(limit !== undefined ? { limit } : {}) }).map((e) => ({ seq: Number(e.key[0]), ...e.value }));
  }

  listen(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Never awaited (SpeechSink): a chunk that could not be logged is reported here. */
  chunk(speech: Speech, _conversation: Conversation): void {
    const failed = (err: unknown) => this.#report(err, `logging a chunk of ${speech.id}`);
    try {
      if (this.#finals.get(speech.id) !== undefined) return;
      this.#appendSpeech("chunk", speech).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  async final(speech: Speech, _conversation: Conversation): Promise<void> {
    if (this.#finals.get(speech.id) !== undefined) return;
    const seq = await this.#appendSpeech("final", speech);
    await this.#finals.put(speech.id, seq);
    this.#posted();
  }

  /** Logged like speech, so a client that reconnects with Last-Event-ID learns it too. */
  async failed(perception: string, reason: string, _conversation: Conversation): Promise<void> {
    await this.#append({ event: "failed", perception, reason });
  }

  async close(): Promise<void> {
    await this.#writes;
  }

  #appendSpeech(event: "chunk" | "final", speech: Speech): Promise<number> {
    return this.#append({ event, id: speech.id, perception: speech.perception, text: speech.text, ...(speech.speaker.kind === "daimon" ? { daimon: speech.speaker.name } : {}) });
  }

  /** Appends in order: numbers are given when the write is queued, and events reach listeners once stored. */
  #append(value: LoggedEvent): Promise<number> {
    const seq = ++this.#last;
    const write = this.#writes.then(() => this.#events.put(seq, value));
    this.#writes = write.catch(() => undefined);
    if (seq % this.#pruneEvery === 0) this.#queuePrune(seq);
    return write.then(() => {
      for (const listener of this.#listeners) {
        try {
          listener({ seq, ...value } as SpeechEvent);
        } catch (err) {
          // One client whose frame could not be written must not cost the others theirs, nor the log its order.
          this.#report(err, `sending speech event ${seq}`);
        }
      }
      return seq;
    });
  }

  /** In line with the writes (so `close` waits for it), and its failure reported, never left floating. */
  #queuePrune(upTo: number): void {
    const prune = this.#writes.then(() => this.#prune(upTo));
    this.#writes = prune.catch((err: unknown) => this.#report(err, "pruning the speech log"));
  }

  /** Removes the events before the last `keep`, and the record of each final among them. */
  async #prune(upTo: number): Promise<void> {
    const old = this.#events.range({ end: upTo - this.#keep + 1 });
    await Promise.all(
      old.map(async (e) => {
        await this.#events.delete(e.key);
        // A final's record goes with its event, unless a newer event holds it (the final logged again).
        if (e.value.event === "final" && this.#finals.get(e.value.id) === Number(e.key[0])) await this.#finals.delete(e.value.id);
      }),
    );
  }
}
