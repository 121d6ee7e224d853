/**
 * Where a bridge's speech goes: the soul's (or a daimon's) words answering a perception this
 * bridge published, as they arrive on the soul's says subject. Chat platforms post and edit
 * (EditingSink.ts); the HTTP bridge logs and streams them to its clients.
 */
import type { Conversation } from "./PlatformMessage.ts";

/** A platform's reference to a message it holds (Slack: channel + ts; Discord: channel + id). */
export interface PostedRef {
  channel: string;
  id: string;
}

export type Speaker = { kind: "soul" } | { kind: "daimon"; name: string };

export interface Speech {
  /** The speech id: the proposal it delivers, shared by its chunks and its final. */
  id: string;
  /** The perception it answers. */
  perception: string;
  /** A chunk's text, or the whole utterance when `final`. */
  text: string;
  final: boolean;
  /** The chunk's index within the utterance. */
  chunk?: number;
  speaker: Speaker;
}

export interface SpeechSink {
  /** A verified piece while the soul speaks: shown as soon as the platform allows, never awaited. */
  chunk(speech: Speech, conversation: Conversation): void;
  /**
   * The whole utterance, shown exactly once. Resolves once the sink holds it for good: on the
   * platform, or recorded to be posted (also after a restart), so that the speech consumer never
   * waits on a platform. A rejection means "deliver it again".
   */
  final(speech: Speech, conversation: Conversation): Promise<void>;
  /** Takes up what a restart left undelivered; called before speech is followed again. */
  resume?(): Promise<void>;
  /** The soul has the message and is thinking about it. */
  thinking?(perception: string, conversation: Conversation): void;
  /**
   * The soul's turn for a perception of this bridge failed: it will not answer it. `reason` is
   * one line (actors/soul failureReason). A chat platform posts nothing (the reason is for the
   * operator's log, which the core writes) and stops showing that the soul thinks; the HTTP
   * bridge tells its client. Never awaited by the core beyond reporting its failure.
   */
  failed?(perception: string, reason: string, conversation: Conversation): Promise<void> | void;
  /** Finishes what is in flight. */
  close?(): Promise<void>;
}

/** One piece of one speech on a platform: utterances longer than the platform's limit are several. */
export interface PostKey {
  speechId: string;
  part: number;
  speaker: Speaker;
}

/** What a chat platform does with speech (Slack, Discord). */
export interface PlatformOutlet {
  /** Characters per message. */
  readonly limit: number;
  /** Characters per message for this speaker, when it differs (a daimon's words with a name prefix). */
  limitFor?(speaker: Speaker): number;
  /** The shortest time between two edits of one message while streaming. */
  readonly editIntervalMs: number;
  /**
   * Posts a reply in the conversation. Where the platform has its own idempotency, the post
   * carries the key (Discord's nonce), so a repeat after a crash is the same message.
   */
  post(conversation: Conversation, text: string, key: PostKey): Promise<PostedRef>;
  edit(ref: PostedRef, text: string): Promise<void>;
  /** The post made for this key before a crash, if the platform can tell (Slack: the message metadata). */
  find?(conversation: Conversation, key: PostKey): Promise<PostedRef | undefined>;
  /** Shows (or stops showing) that the soul is thinking: a reaction, a typing indicator. */
  thinking?(conversation: Conversation, on: boolean): Promise<void>;
  /** The thread the soul's replies to this conversation land in, for follow-ups without a mention. */
  replyThread?(conversation: Conversation): string | undefined;
}
