/**
 * What a bridge remembers in LMDB (the node's store, under the bridge's own actor id), so that
 * each platform message is answered once and each reply is posted once, and whole, across
 * restarts:
 *
 * - `perceptions`: each message taken, by perception id, with where it was said. Written
 *   before the perception is published (with the message), then marked published: a message
 *   whose publish was cut short is published again at the next start, and the speech
 *   answering it finds its conversation here.
 * - `threads`: the threads the soul has spoken in, for follow-ups without a mention.
 * - `posts`: each piece of speech posted, by speech id and part: the platform's message
 *   reference once posted. An entry with no reference is a post that may or may not have
 *   reached the platform (a crash in between): the platform is asked before posting again.
 * - `replies`: each final utterance received and not yet wholly on the platform, by speech id,
 *   with its conversation. Written before the bus is told the speech was taken, removed once
 *   every part shows the final text: a restart posts (or edits a streamed draft to) what is left
 *   here, whether or not the bus still has it (the in-process bus keeps nothing across a crash).
 *
 * Every write is one occurrence of the `bridge.record` fault point. Entries older than `keepMs`
 * (default 7 days, the stream's max age) are pruned at start and every `pruneEveryMs` (default
 * an hour) while the bridge runs (BridgeRuntime), so a node up for months keeps a week.
 */
import { atFaultPoint } from "../../runtime/faults/index.ts";
import type { KeyPart, KvNamespace, Store } from "../../runtime/store/index.ts";
import type { Conversation, PlatformMessage } from "./PlatformMessage.ts";
import type { PostedRef, Speaker } from "./SpeechSink.ts";

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

export interface PostEntry {
  /** Absent until the platform has confirmed the post. */
  ref?: PostedRef;
  /** The text the platform shows now (or is about to, while `ref` is absent). */
  shown: string;
  /** Set once the part shows its final text: a piece of the stream arriving later is not shown. */
  final?: boolean;
  at: number;
}

/** A final utterance the bridge has taken from the bus and not yet wholly posted. */
export interface PendingReply {
  perception: string;
  conversation: Conversation;
  speaker: Speaker;
  text: string;
  at: number;
}

export const DEFAULT_LEDGER_KEEP_MS = 7 * 24 * 3600_000;
export const DEFAULT_LEDGER_PRUNE_EVERY_MS = 3600_000;

/** Entries read (and removed) per step of a prune: a big ledger is pruned without holding the event loop. */
const PRUNE_PAGE = 500;

export class BridgeLedger {
  readonly #perceptions: KvNamespace<TakenMessage>;
  readonly #threads: KvNamespace<number>;
  readonly #posts: KvNamespace<PostEntry>;
  readonly #replies: KvNamespace<PendingReply>;

  constructor(store: Store, actorId: string) {
    this.#perceptions = store.kv<TakenMessage>(actorId, "perceptions");
    this.#threads = store.kv<number>(actorId, "threads");
    this.#posts = store.kv<PostEntry>(actorId, "posts");
    this.#replies = store.kv<PendingReply>(actorId, "replies");
  }

  taken(perceptionId: string): TakenMessage | undefined {
    return this.#perceptions.get(perceptionId);
  }

  /** Records a message taken: with `unpublished` until its perception is on the bus. */
  take(perceptionId: string, conversation: Conversation, unpublished?: PlatformMessage): Promise<void> {
    const entry: TakenMessage = { conversation, at: Date.now(), ...(unpublished ? { unpublished } : {}) };
    return atFaultPoint("bridge.record", () => this.#perceptions.put(perceptionId, entry), { kind: "perception", id: perceptionId, published: !unpublished });
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
    return atFaultPoint("bridge.record", () => this.#perceptions.delete(perceptionId), { kind: "forget", id: perceptionId });
  }

  inThread(channel: string, thread: string): boolean {
    return this.#threads.get([channel, thread]) !== undefined;
  }

  joinThread(channel: string, thread: string): Promise<void> {
    return atFaultPoint("bridge.record", () => this.#threads.put([channel, thread], Date.now()), { kind: "thread", channel, thread });
  }

  post(speechId: string, part: number): PostEntry | undefined {
    return this.#posts.get([speechId, part]);
  }

  recordPost(speechId: string, part: number, entry: PostEntry): Promise<void> {
    return atFaultPoint("bridge.record", () => this.#posts.put([speechId, part], entry), { kind: "post", speechId, part, confirmed: entry.ref !== undefined, final: entry.final === true });
  }

  /**
   * Whether some post is recorded with this platform message: a post looked for after its
   * answer was lost must not take another post's message (the same words said twice) for its own.
   */
  recordsMessage(ref: PostedRef): boolean {
    for (const e of this.#posts.range()) if (e.value.ref?.id === ref.id && e.value.ref.channel === ref.channel) return true;
    return false;
  }

  reply(speechId: string): PendingReply | undefined {
    return this.#replies.get(speechId);
  }

  /** Records a final taken from the bus, before the bus is told so: from here on, delivering it is the bridge's. */
  awaitReply(speechId: string, reply: PendingReply): Promise<void> {
    return atFaultPoint("bridge.record", () => this.#replies.put(speechId, reply), { kind: "reply", speechId, channel: reply.conversation.channel });
  }

  /** The reply is wholly on the platform (or given up on). */
  replied(speechId: string): Promise<void> {
    return atFaultPoint("bridge.record", async () => void (await this.#replies.delete(speechId)), { kind: "replied", speechId });
  }

  /** Replies a restart left undelivered, oldest first. */
  pendingReplies(): { speechId: string; reply: PendingReply }[] {
    return this.#replies
      .range()
      .map((e) => ({ speechId: String(e.key[0]), reply: e.value }))
      .sort((a, b) => a.reply.at - b.reply.at);
  }

  /** Removes what is older than `keepMs`, a page at a time; returns how many entries went. */
  async prune(keepMs = DEFAULT_LEDGER_KEEP_MS, now = Date.now()): Promise<number> {
    const cutoff = now - keepMs;
    return (
      (await pruneOlder(this.#perceptions, (v) => v.at, cutoff)) +
      (await pruneOlder(this.#threads, (v) => v, cutoff)) +
      (await pruneOlder(this.#posts, (v) => v.at, cutoff)) +
      (await pruneOlder(this.#replies, (v) => v.at, cutoff))
    );
  }

  /** Entries in the ledger now, by namespace (each namespace read whole: for tests and diagnosis, not a hot path). */
  sizes(): { perceptions: number; threads: number; posts: number; replies: number } {
    return { perceptions: this.#perceptions.range().length, threads: this.#threads.range().length, posts: this.#posts.range().length, replies: this.#replies.range().length };
  }
}

async function pruneOlder<V>(ns: KvNamespace<V>, at: (value: V) => number, cutoff: number): Promise<number> {
  let removed = 0;
  let after: KeyPart[] | undefined;
  for (;;) {
    const page = ns.range({ ...(after ? { start: after } : {}), limit: PRUNE_PAGE + 1 }).filter((e) => !after || !sameKey(e.key, after));
    if (page.length === 0) return removed;
    const old = page.filter((e) => at(e.value) < cutoff);
    const gone = await Promise.all(old.map((e) => ns.delete(e.key)));
    removed += gone.filter(Boolean).length;
    after = page[page.length - 1]!.key;
    // Let the node breathe between pages.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function sameKey(a: readonly KeyPart[], b: readonly KeyPart[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
