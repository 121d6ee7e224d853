/**
 * What a bridge remembers in LMDB (the node's store, under the bridge's own actor id), so that
 * each platform message is answered once and each reply is posted once, across restarts:
 *
 * - `perceptions`: each message taken, by perception id, with where it was said. Written
 *   before the perception is published (with the message), then marked published: a message
 *   whose publish was cut short is published again at the next start, and the speech
 *   answering it finds its conversation here.
 * - `threads`: the threads the soul has spoken in, for follow-ups without a mention.
 * - `posts`: each piece of speech posted, by speech id and part: the platform's message
 *   reference once posted. An entry with no reference is a post that may or may not have
 *   reached the platform (a crash in between): the platform is asked before posting again.
 *
 * Entries older than `keepMs` (default 7 days, the stream's max age) are pruned at start.
 */
import type { KvNamespace, Store } from "../../runtime/store/index.ts";
import type { Conversation, PlatformMessage } from "./PlatformMessage.ts";

export interface TakenMessage {
  conversation: Conversation;
  /** The message until its perception is on the bus: what a restart publishes again. */
  unpublished?: PlatformMessage;
  /**
   * Its caller was told the publish failed and sends it again itself (HTTP): a restart does not
   * publish it behind the caller's back, but a publish whose acknowledgement was lost may have
   * landed, so the entry stays for the speech answering it and for the caller's retry.
   */
  callerRetries?: true;
  at: number;
}

/** A platform's reference to a message it holds (Slack: channel + ts; Discord: channel + id). */
export interface PostedRef {
  channel: string;
  id: string;
}

export interface PostEntry {
  /** Absent until the platform has confirmed the post. */
  ref?: PostedRef;
  /** The text the platform shows now. */
  shown: string;
  at: number;
}

export const DEFAULT_LEDGER_KEEP_MS = 7 * 24 * 3600_000;

export class BridgeLedger {
  readonly #perceptions: KvNamespace<TakenMessage>;
  readonly #threads: KvNamespace<number>;
  readonly #posts: KvNamespace<PostEntry>;

  constructor(store: Store, actorId: string) {
    this.#perceptions = store.kv<TakenMessage>(actorId, "perceptions");
    this.#threads = store.kv<number>(actorId, "threads");
    this.#posts = store.kv<PostEntry>(actorId, "posts");
  }

  taken(perceptionId: string): TakenMessage | undefined {
    return this.#perceptions.get(perceptionId);
  }

  /** Records a message taken: with `unpublished` until its perception is on the bus. */
  take(perceptionId: string, conversation: Conversation, unpublished?: PlatformMessage): Promise<void> {
    return this.#perceptions.put(perceptionId, { conversation, at: Date.now(), ...(unpublished ? { unpublished } : {}) });
  }

  /** Messages taken whose perception may not have reached the bus, and which a restart publishes again. */
  unpublished(): PlatformMessage[] {
    return this.#perceptions.range().flatMap((e) => (e.value.unpublished && !e.value.callerRetries ? [e.value.unpublished] : []));
  }

  /** Leaves an unpublished message to its caller's retry (`callerRetries`). */
  async leaveToCaller(perceptionId: string): Promise<void> {
    const taken = this.taken(perceptionId);
    if (taken?.unpublished) await this.#perceptions.put(perceptionId, { ...taken, callerRetries: true });
  }

  forget(perceptionId: string): Promise<boolean> {
    return this.#perceptions.delete(perceptionId);
  }

  inThread(channel: string, thread: string): boolean {
    return this.#threads.get([channel, thread]) !== undefined;
  }

  joinThread(channel: string, thread: string): Promise<void> {
    return this.#threads.put([channel, thread], Date.now());
  }

  post(speechId: string, part: number): PostEntry | undefined {
    return this.#posts.get([speechId, part]);
  }

  recordPost(speechId: string, part: number, entry: PostEntry): Promise<void> {
    return this.#posts.put([speechId, part], entry);
  }

  /**
   * Whether some post is recorded with this platform message: a post looked for after its
   * answer was lost must not take another post's message (the same words said twice) for its own.
   */
  recordsMessage(ref: PostedRef): boolean {
    for (const e of this.#posts.range()) if (e.value.ref?.id === ref.id && e.value.ref.channel === ref.channel) return true;
    return false;
  }

  /** Removes what is older than `keepMs`; returns how many entries went. */
  async prune(keepMs = DEFAULT_LEDGER_KEEP_MS, now = Date.now()): Promise<number> {
    const cutoff = now - keepMs;
    let removed = 0;
    for (const e of this.#perceptions.range()) if (e.value.at < cutoff && (await this.#perceptions.delete(e.key))) removed++;
    for (const e of this.#threads.range()) if (e.value < cutoff && (await this.#threads.delete(e.key))) removed++;
    for (const e of this.#posts.range()) if (e.value.at < cutoff && (await this.#posts.delete(e.key))) removed++;
    return removed;
  }
}
