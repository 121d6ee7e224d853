/**
 * The HTTP bridge's speech, as events a client can resume: every chunk and final answering a
 * perception made through this bridge, numbered in LMDB (the number is the SSE `id:`), so a
 * client that reconnects with `Last-Event-ID` gets what it missed, also across a restart.
 * A final is logged once per speech id: the bus redelivering it after a crash adds nothing.
 * The log keeps the last `keep` events.
 */
import type { KvNamespace, Store } from "../../runtime/store/index.ts";
import type { Conversation, Speech, SpeechSink } from "../core/index.ts";

export interface SpeechEvent {
  /** Position in the log: the SSE event id. */
  seq: number;
  event: "chunk" | "final";
  /** The speech id. */
  id: string;
  /** The perception it answers. */
  perception: string;
  text: string;
  /** A daimon speaking, by name; absent for the soul. */
  daimon?: string;
}

type Listener = (event: SpeechEvent) => void;

export const DEFAULT_SPEECH_LOG_KEEP = 10_000;

export class SpeechLog implements SpeechSink {
  readonly #events: KvNamespace<Omit<SpeechEvent, "seq">>;
  readonly #finals: KvNamespace<number>;
  readonly #listeners = new Set<Listener>();
  #last: number;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(store: Store, actorId: string, private readonly keep = DEFAULT_SPEECH_LOG_KEEP) {
    this.#events = store.kv(actorId, "speech");
    this.#finals = store.kv(actorId, "speech-finals");
    const last = this.#events.range({ reverse: true, limit: 1 })[0];
    this.#last = last ? Number(last.key[0]) : 0;
  }

  get last(): number {
    return this.#last;
  }

  /** Events after `seq`, oldest first. */
  since(seq: number): SpeechEvent[] {
    return this.#events.range({ start: seq + 1 }).map((e) => ({ seq: Number(e.key[0]), ...e.value }));
  }

  listen(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  chunk(speech: Speech, _conversation: Conversation): void {
    if (this.#finals.get(speech.id) !== undefined) return;
    this.#append("chunk", speech).catch(() => undefined);
  }

  async final(speech: Speech, _conversation: Conversation): Promise<void> {
    if (this.#finals.get(speech.id) !== undefined) return;
    const seq = await this.#append("final", speech);
    await this.#finals.put(speech.id, seq);
  }

  async close(): Promise<void> {
    await this.#writes;
  }

  /** Appends in order: numbers are given when the write is queued, and events reach listeners once stored. */
  #append(event: "chunk" | "final", speech: Speech): Promise<number> {
    const seq = ++this.#last;
    const value = { event, id: speech.id, perception: speech.perception, text: speech.text, ...(speech.speaker.kind === "daimon" ? { daimon: speech.speaker.name } : {}) };
    const write = this.#writes.then(() => this.#events.put(seq, value));
    this.#writes = write.catch(() => undefined);
    return write.then(() => {
      for (const listener of this.#listeners) listener({ seq, ...value });
      if (seq % 1000 === 0) void this.#prune(seq);
      return seq;
    });
  }

  async #prune(upTo: number): Promise<void> {
    for (const e of this.#events.range({ end: upTo - this.keep + 1 })) await this.#events.delete(e.key);
  }
}
