/**
 * The soul's words and its daimons' words through two EditingSinks: a daimon's words carry a
 * `**Name:** ` prefix, so they are split at a shorter limit than the soul's 2,000 characters,
 * and the core's PlatformOutlet has one limit per outlet. Both share the ledger and the
 * per-channel queue, so their posts keep their order and are each made once.
 */
import type { Conversation, EditingSink, Speech, SpeechSink } from "../core/index.ts";

export class SpeakerSink implements SpeechSink {
  constructor(
    private readonly soul: EditingSink,
    private readonly daimons: EditingSink,
  ) {}

  chunk(speech: Speech, conversation: Conversation): void {
    this.#for(speech).chunk(speech, conversation);
  }

  final(speech: Speech, conversation: Conversation): Promise<void> {
    return this.#for(speech).final(speech, conversation);
  }

  /** Only the soul thinks about a message (its final ends the typing). */
  thinking(perception: string, conversation: Conversation): void {
    this.soul.thinking(perception, conversation);
  }

  async close(): Promise<void> {
    await Promise.all([this.soul.close(), this.daimons.close()]);
  }

  #for(speech: Speech): EditingSink {
    return speech.speaker.kind === "soul" ? this.soul : this.daimons;
  }
}
