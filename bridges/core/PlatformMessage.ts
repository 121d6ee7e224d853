/**
 * A message from a platform, as every bridge hands it to the core, and the perception it
 * becomes. The perception's id is the message's identity on its platform (Slack: team,
 * channel and `ts`; Discord: the message id; HTTP: the Idempotency-Key), so a platform's
 * retry or a gateway's replay is the same envelope id, which the stream and the soul's inbox
 * drop as a repeat.
 *
 * User text and names are untrusted: they travel as the perception's `content` and `name`,
 * which the soul's cognition fences before any prompt (runtime/cognition/untrustedMemory.ts).
 */
import { createHash } from "node:crypto";
import { makeEnvelope, type Envelope } from "../../runtime/bus/index.ts";

export type BridgeType = "slack" | "discord" | "http" | "terminal";

/** Where a message was said, and so where the soul's answer goes. */
export interface Conversation {
  platform: BridgeType;
  channel: string;
  /** The thread (Slack `thread_ts`, a Discord thread channel); absent at the top of a channel. */
  thread?: string;
  /** The message the answer replies to (Slack `ts`, Discord message id). */
  messageId: string;
  /** A direct message. */
  direct: boolean;
}

export interface PlatformMessage extends Conversation {
  /** The perception id: the message's identity on its platform (`platformPerceptionId`). */
  id: string;
  /**
   * Where a thread is a channel of its own (Discord), the channel it was started in: the
   * policy's channel lists apply to it as to the thread. Absent where threads live in their
   * channel (Slack), and outside threads.
   */
  parentChannel?: string;
  userId: string;
  /** Display name; untrusted. */
  userName: string;
  /** The text, with the mention of the soul stripped; untrusted. */
  text: string;
  /** What happened (PROTOCOL.md perception `action`); default `said`. */
  action?: string;
  /** The soul was mentioned. */
  mentioned: boolean;
  /** Written by a bot, this bridge's own included. */
  fromBot: boolean;
  /** Written by this bridge's own bot: ignored without an event (a bridge hears itself on every post). */
  own?: boolean;
}

/** Names and ids on the wire are identifiers of at most 256 chars without control characters. */
const ID_MAX = 200;

/**
 * A perception id from a platform identity: readable when short and clean
 * (`slack:T1:C2:1700000000.000100`), else a digest of it, so any platform value (a long
 * Idempotency-Key, a control character) still gives a valid, stable id.
 */
export function platformPerceptionId(platform: BridgeType, ...identity: string[]): string {
  const plain = `${platform}:${identity.join(":")}`;
  // eslint-disable-next-line no-control-regex
  if (plain.length <= ID_MAX && !/[\u0000-\u001f\u007f-\u009f]/.test(plain)) return plain;
  return `${platform}:sha256:${createHash("sha256").update(JSON.stringify(identity)).digest("hex")}`;
}

/** A conversation's key: (platform, channel, thread). */
export function conversationKey(c: Pick<Conversation, "platform" | "channel" | "thread">): string {
  return `${c.platform}:${c.channel}:${c.thread ?? ""}`;
}

const NAME_MAX = 256;

/** The perception a platform message becomes, addressed to the soul, sent by the bridge. */
export function perceptionOf(message: PlatformMessage, soulId: string, from: string): Envelope<"perception"> {
  const meta: Record<string, unknown> = {
    platform: message.platform,
    userId: message.userId,
    channel: message.channel,
    messageId: message.messageId,
    direct: message.direct,
    conversation: conversationKey(message),
    ...(message.thread !== undefined ? { thread: message.thread } : {}),
  };
  const name = message.userName.length > NAME_MAX ? message.userName.slice(0, NAME_MAX) : message.userName;
  return makeEnvelope("perception", from, soulId, { action: message.action ?? "said", content: message.text, name: name || message.userId, meta }, { id: message.id });
}
