/**
 * One part of one speech on a chat platform, posted at most once, also across a crash: the
 * ledger records the post before it is made (no reference yet) and its reference after. A part
 * recorded without a reference may have reached the platform; the platform is asked first
 * (`find`), or the post carries the platform's own idempotency key (`post`'s key), before it is
 * made again. Every platform post or edit is one occurrence of the `bridge.post` fault point,
 * in the channel's send queue.
 */
import { atFaultPoint } from "../../runtime/faults/index.ts";
import type { BridgeLedger } from "./BridgeLedger.ts";
import type { BridgeCounters } from "./bridgeMachine.ts";
import type { ChannelQueue } from "./ChannelQueue.ts";
import type { Conversation } from "./PlatformMessage.ts";
import type { PlatformOutlet, PostedRef, PostKey, Speaker } from "./SpeechSink.ts";

export class PartPoster {
  constructor(
    private readonly outlet: PlatformOutlet,
    private readonly ledger: BridgeLedger,
    private readonly queue: ChannelQueue,
    private readonly count: (counter: keyof BridgeCounters) => void,
  ) {}

  /**
   * The soul speaks in the reply's thread: recorded before the first post, so a follow-up that
   * arrives as soon as the reply shows is already a follow-up in the soul's thread.
   */
  async joinThread(speaker: Speaker, conversation: Conversation): Promise<void> {
    const thread = this.outlet.replyThread?.(conversation) ?? conversation.thread;
    if (thread !== undefined && speaker.kind === "soul" && !this.ledger.inThread(conversation.channel, thread)) await this.ledger.joinThread(conversation.channel, thread);
  }

  /** A streamed draft edited to more of its text; the ledger then says what the platform shows. */
  async edit(conversation: Conversation, key: PostKey, ref: PostedRef, text: string): Promise<void> {
    await this.queue.run(conversation.channel, () => this.#edit(conversation, key, ref, text, false));
    this.count("edits");
    await this.ledger.recordPost(key.speechId, key.part, { ref, shown: text, at: Date.now() });
  }

  /**
   * Makes the platform show `text` as this part, posting it at most once. `final`: the text is
   * the utterance's last word for this part; a part whose draft was streamed is edited to it.
   */
  async ensure(key: PostKey, conversation: Conversation, text: string, final: boolean): Promise<PostedRef> {
    const entry = this.ledger.post(key.speechId, key.part);
    let ref = entry?.ref;
    if (!ref && entry && this.outlet.find) {
      ref = await this.queue.run(conversation.channel, () => this.outlet.find!(conversation, key));
      if (ref) this.count("recovered");
    }
    const record = (posted: PostedRef) => this.ledger.recordPost(key.speechId, key.part, { ref: posted, shown: text, at: Date.now(), ...(final ? { final } : {}) });
    if (!ref) {
      await this.ledger.recordPost(key.speechId, key.part, { shown: text, at: Date.now(), ...(final ? { final } : {}) });
      const posted = await this.queue.run(conversation.channel, () => this.#post(conversation, key, text, final));
      await record(posted);
      this.count("posted");
      return posted;
    }
    const showsIt = entry?.shown === text;
    if (!showsIt) await this.queue.run(conversation.channel, () => this.#edit(conversation, key, ref!, text, final));
    if (!showsIt || !entry?.ref || (final && !entry.final)) await record(ref);
    return ref;
  }

  #post(conversation: Conversation, key: PostKey, text: string, final: boolean): Promise<PostedRef> {
    return atFaultPoint("bridge.post", () => this.outlet.post(conversation, text, key), { op: "post", final, ...this.#where(conversation, key) });
  }

  #edit(conversation: Conversation, key: PostKey, ref: PostedRef, text: string, final: boolean): Promise<void> {
    return atFaultPoint("bridge.post", () => this.outlet.edit(ref, text), { op: "edit", final, ...this.#where(conversation, key) });
  }

  #where(conversation: Conversation, key: PostKey) {
    return { platform: conversation.platform, channel: conversation.channel, speechId: key.speechId, part: key.part };
  }
}
