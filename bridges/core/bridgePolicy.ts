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
  /** Only these channels (ids); absent: every channel the bot is in. */
  allowChannels: z.array(z.string().min(1)).optional(),
  /** Never these channels. */
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
  if (policy.blockChannels.includes(m.channel)) return { answer: false, reason: `channel ${m.channel} is blocked (policy.blockChannels)` };
  if (policy.allowChannels && !policy.allowChannels.includes(m.channel)) return { answer: false, reason: `channel ${m.channel} is not in policy.allowChannels` };
  if (m.mentioned) return { answer: true, why: "the soul is mentioned" };
  if (policy.reply === "all") return { answer: true, why: "policy.reply is all" };
  if (m.thread !== undefined && inSoulThread) {
    return policy.followThreads ? { answer: true, why: "a follow-up in the soul's thread" } : { answer: false, reason: "follow-ups in threads are off (policy.followThreads)" };
  }
  return { answer: false, reason: "the soul is not mentioned (policy.reply is mentions)" };
}
