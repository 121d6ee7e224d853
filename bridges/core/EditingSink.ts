/**
 * Speech on a chat platform (Slack, Discord): the first verified piece is posted at once, the
 * pieces after it edit that message at most once per `editIntervalMs`, and the final text
 * replaces it, split at the platform's limit into further messages when it is long.
 *
 * Each part of each speech is posted once, also across a crash: the ledger records the post
 * before it is made (no reference yet) and its reference after. A part recorded without a
 * reference may have reached the platform; the platform is asked first (`find`), or the post
 * carries the platform's own idempotency key (`post`'s key), before it is made again.
 */
import type { BridgeLedger, PostedRef } from "./BridgeLedger.ts";
import type { BridgeCounters } from "./bridgeMachine.ts";
import type { ChannelQueue } from "./ChannelQueue.ts";
import type { Conversation } from "./PlatformMessage.ts";
import type { PlatformOutlet, PostKey, Speech, SpeechSink } from "./SpeechSink.ts";
import { splitText } from "./splitText.ts";

const FINISHED_KEPT = 10_000;
/** How long a "thinking" indicator may stay when no speech comes (a turn that says nothing). */
const THINKING_MAX_MS = 120_000;

interface Stream {
  conversation: Conversation;
  text: string;
  shown: string;
  ref?: PostedRef;
  /** The post or edit in flight. */
  busy?: Promise<void>;
  timer?: ReturnType<typeof setTimeout>;
  lastEditAt: number;
  /** Set once the final took over: pieces arriving later are ignored. */
  done: boolean;
}

export interface EditingSinkHooks {
  count(counter: keyof BridgeCounters): void;
  report(err: unknown, what: string): void;
}

export class EditingSink implements SpeechSink {
  readonly #streams = new Map<string, Stream>();
  /** Speech already final here: a chunk arriving after its final (a race on the bus) must not post it again. */
  readonly #finished = new Set<string>();
  readonly #thinking = new Map<string, { conversation: Conversation; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly outlet: PlatformOutlet,
    private readonly ledger: BridgeLedger,
    private readonly queue: ChannelQueue,
    private readonly hooks: EditingSinkHooks,
  ) {}

  thinking(perception: string, conversation: Conversation): void {
    if (!this.outlet.thinking || this.#thinking.has(perception)) return;
    const timer = setTimeout(() => this.#stopThinking(perception), THINKING_MAX_MS);
    timer.unref?.();
    this.#thinking.set(perception, { conversation, timer });
    this.queue.run(conversation.channel, () => this.outlet.thinking!(conversation, true)).catch((err: unknown) => this.hooks.report(err, "showing that the soul thinks"));
  }

  chunk(speech: Speech, conversation: Conversation): void {
    if (this.#finished.has(speech.id)) return;
    let stream = this.#streams.get(speech.id);
    if (!stream) {
      // A restart mid-utterance: the part already posted is edited, not posted again.
      const posted = this.ledger.post(speech.id, 0);
      stream = { conversation, text: "", shown: posted?.shown ?? "", lastEditAt: 0, done: false, ...(posted?.ref ? { ref: posted.ref } : {}) };
      this.#streams.set(speech.id, stream);
    }
    if (stream.done) return;
    stream.text += speech.text;
    this.#schedule(speech, stream);
  }

  async final(speech: Speech, conversation: Conversation): Promise<void> {
    const stream = this.#streams.get(speech.id);
    if (stream) {
      stream.done = true;
      if (stream.timer) clearTimeout(stream.timer);
      await stream.busy?.catch(() => undefined);
    }
    const parts = splitText(speech.text, this.#limit(speech));
    if (parts.length) await this.#joinThread(speech, conversation);
    for (const [part, text] of parts.entries()) await this.#ensurePosted({ speechId: speech.id, part, speaker: speech.speaker }, conversation, text);
    this.#streams.delete(speech.id);
    this.#finished.add(speech.id);
    if (this.#finished.size > FINISHED_KEPT) this.#finished.delete(this.#finished.values().next().value as string);
    this.#stopThinking(speech.perception);
  }

  async close(): Promise<void> {
    for (const stream of this.#streams.values()) if (stream.timer) clearTimeout(stream.timer);
    await Promise.all([...this.#streams.values()].map((s) => s.busy?.catch(() => undefined)));
    for (const { timer } of this.#thinking.values()) clearTimeout(timer);
    this.#thinking.clear();
    await this.queue.idle();
  }

  /** Shows the stream's text now if nothing is in flight and the edit interval allows, else later. */
  #schedule(speech: Speech, stream: Stream): void {
    if (stream.busy || stream.timer) return;
    const wait = stream.ref ? Math.max(0, stream.lastEditAt + this.outlet.editIntervalMs - Date.now()) : 0;
    if (wait > 0) {
      stream.timer = setTimeout(() => {
        delete stream.timer;
        this.#schedule(speech, stream);
      }, wait);
      return;
    }
    const text = splitText(stream.text, this.#limit(speech))[0] ?? "";
    if (!text.trim() || text === stream.shown) return;
    const key: PostKey = { speechId: speech.id, part: 0, speaker: speech.speaker };
    const post = () => this.#joinThread(speech, stream.conversation).then(() => this.#ensurePosted(key, stream.conversation, text));
    stream.busy = (stream.ref ? this.#edit(stream, stream.ref, text) : post().then((ref) => void (stream.ref = ref)))
      .then(() => {
        stream.shown = text;
        stream.lastEditAt = Date.now();
      })
      .catch((err: unknown) => this.hooks.report(err, `streaming ${speech.id}`))
      .finally(() => {
        delete stream.busy;
        if (!stream.done && stream.text !== stream.shown) this.#schedule(speech, stream);
      });
  }

  #limit(speech: Speech): number {
    return this.outlet.limitFor?.(speech.speaker) ?? this.outlet.limit;
  }

  /**
   * The soul speaks in the reply's thread: recorded before the first post, so a follow-up that
   * arrives as soon as the reply shows is already a follow-up in the soul's thread.
   */
  async #joinThread(speech: Speech, conversation: Conversation): Promise<void> {
    const thread = this.outlet.replyThread?.(conversation) ?? conversation.thread;
    if (thread !== undefined && speech.speaker.kind === "soul" && !this.ledger.inThread(conversation.channel, thread)) await this.ledger.joinThread(conversation.channel, thread);
  }

  #edit(stream: Stream, ref: PostedRef, text: string): Promise<void> {
    return this.queue.run(stream.conversation.channel, () => this.outlet.edit(ref, text)).then(() => this.hooks.count("edits"));
  }

  /** Makes the platform show `text` as this part, posting it at most once. */
  async #ensurePosted(key: PostKey, conversation: Conversation, text: string): Promise<PostedRef> {
    const entry = this.ledger.post(key.speechId, key.part);
    let ref = entry?.ref;
    if (!ref && entry && this.outlet.find) {
      ref = await this.queue.run(conversation.channel, () => this.outlet.find!(conversation, key));
      if (ref) this.hooks.count("recovered");
    }
    if (ref) {
      if (entry?.shown !== text || !entry.ref) {
        if (entry?.shown !== text) await this.queue.run(conversation.channel, () => this.outlet.edit(ref!, text));
        await this.ledger.recordPost(key.speechId, key.part, { ref, shown: text, at: Date.now() });
      }
      return ref;
    }
    await this.ledger.recordPost(key.speechId, key.part, { shown: text, at: Date.now() });
    const posted = await this.queue.run(conversation.channel, () => this.outlet.post(conversation, text, key));
    await this.ledger.recordPost(key.speechId, key.part, { ref: posted, shown: text, at: Date.now() });
    this.hooks.count("posted");
    return posted;
  }

  #stopThinking(perception: string): void {
    const thinking = this.#thinking.get(perception);
    if (!thinking) return;
    clearTimeout(thinking.timer);
    this.#thinking.delete(perception);
    this.queue.run(thinking.conversation.channel, () => this.outlet.thinking!(thinking.conversation, false)).catch((err: unknown) => this.hooks.report(err, "clearing the thinking indicator"));
  }
}
