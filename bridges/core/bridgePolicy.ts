/**
 * Which messages a soul answers, as data in the bridge's config (`options.policy`), so that
 * "why didn't it answer?" has an answer: a message the policy ignores is reported with its
 * reason (BridgeRuntime publishes a `bridge.ignored` event on the soul's events subject).
 *
 * Age is never a reason: Slack's five-minute window concerns a request's signature
 * timestamp, not the message, and a message redelivered after an outage is still answered.
 */
import { z } from "zod";
import type { PlatformMessage } from "./PlatformMessage.ts";

export const bridgePolicySchema = z.strictObject({
  /** `mentions`: in channels, only messages that mention the soul; `all`: every message. */
  reply: z.enum(["mentions", "all"]).default("mentions"),
  /** Only these channels (ids); absent: every channel the bot is in. A Discord thread is in its own id's list and its channel's. */
  allowChannels: z.array(z.string().min(1)).optional(),
  /** Never these channels (a Discord thread: neither its own id nor its channel's). */
  blockChannels: z.array(z.string().min(1)).default([]),
  /** Answer direct messages. */
  dms: z.boolean().default(true),
  /** Answer follow-ups in a thread the soul already speaks in, without a new mention. */
  followThreads: z.boolean().default(true),
});

export type BridgePolicy = z.infer<typeof bridgePolicySchema>;

export const DEFAULT_POLICY: BridgePolicy = bridgePolicySchema.parse({});

export type PolicyDecision = { answer: true; why: string } | { answer: false; reason: string };

/** `inSoulThread`: the soul has spoken in the message's thread before. */
export function decide(policy: BridgePolicy, m: PlatformMessage, inSoulThread: boolean): PolicyDecision {
  if (m.fromBot) return { answer: false, reason: "the message is from a bot" };
  if (m.direct) return policy.dms ? { answer: true, why: "a direct message" } : { answer: false, reason: "direct messages are off (policy.dms)" };
  const listed = channelListed(policy, m);
  if (listed) return { answer: false, reason: listed };
  if (m.mentioned) return { answer: true, why: "the soul is mentioned" };
  if (policy.reply === "all") return { answer: true, why: "policy.reply is all" };
  if (m.thread !== undefined && inSoulThread) {
    return policy.followThreads ? { answer: true, why: "a follow-up in the soul's thread" } : { answer: false, reason: "follow-ups in threads are off (policy.followThreads)" };
  }
  return { answer: false, reason: "the soul is not mentioned (policy.reply is mentions)" };
}

/**
 * Why the channel lists refuse the message, if they do. A thread that is a channel of its own
 * is in its parent channel as much as in itself: either one blocked blocks it, either one
 * allowed allows it.
 */
function channelListed(policy: BridgePolicy, m: PlatformMessage): string | undefined {
  const parent = m.parentChannel !== undefined && m.parentChannel !== m.channel ? m.parentChannel : undefined;
  if (policy.blockChannels.includes(m.channel)) return `channel ${m.channel} is blocked (policy.blockChannels)`;
  if (parent !== undefined && policy.blockChannels.includes(parent)) return `thread ${m.channel} is in channel ${parent}, which is blocked (policy.blockChannels)`;
  const allow = policy.allowChannels;
  if (!allow || allow.includes(m.channel) || (parent !== undefined && allow.includes(parent))) return undefined;
  return parent === undefined ? `channel ${m.channel} is not in policy.allowChannels` : `thread ${m.channel} (in channel ${parent}) is not in policy.allowChannels`;
}
