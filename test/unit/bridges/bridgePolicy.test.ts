/**
 * The policy's channel lists for a message in a thread that is a channel of its own (Discord):
 * they apply to the thread's parent channel as to the thread, blocking winning over allowing.
 * A platform whose threads live in their channel (Slack) names no parent: the lists see the
 * channel itself.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY, decide, type BridgePolicy, type PlatformMessage } from "../../../bridges/core/index.ts";

const inThread: PlatformMessage = {
  platform: "discord",
  id: "discord:900",
  channel: "T1",
  thread: "T1",
  parentChannel: "C1",
  messageId: "900",
  direct: false,
  userId: "U1",
  userName: "Ada",
  text: "hello",
  mentioned: true,
  fromBot: false,
};
const policy = (over: Partial<BridgePolicy>): BridgePolicy => ({ ...DEFAULT_POLICY, ...over });

describe("the policy's channel lists and threads", () => {
  it("a thread of a blocked channel is blocked; a thread blocked by its own id too", () => {
    expect(decide(policy({ blockChannels: ["C1"] }), inThread, false)).toEqual({ answer: false, reason: "thread T1 is in channel C1, which is blocked (policy.blockChannels)" });
    expect(decide(policy({ blockChannels: ["T1"] }), inThread, false)).toEqual({ answer: false, reason: "channel T1 is blocked (policy.blockChannels)" });
    expect(decide(policy({ blockChannels: ["C2"] }), inThread, false)).toMatchObject({ answer: true });
  });

  it("a thread of an allowed channel is allowed, as is a thread allowed by its own id; blocking wins", () => {
    expect(decide(policy({ allowChannels: ["C1"] }), inThread, false)).toMatchObject({ answer: true });
    expect(decide(policy({ allowChannels: ["T1"] }), inThread, false)).toMatchObject({ answer: true });
    expect(decide(policy({ allowChannels: ["C2"] }), inThread, false)).toEqual({ answer: false, reason: "thread T1 (in channel C1) is not in policy.allowChannels" });
    expect(decide(policy({ allowChannels: ["C1"], blockChannels: ["T1"] }), inThread, false)).toMatchObject({ answer: false });
  });

  it("without a parent (Slack's threads live in their channel) the lists see the channel", () => {
    const slack: PlatformMessage = { ...inThread, platform: "slack", channel: "C1", thread: "1700000000.000100" };
    delete slack.parentChannel;
    expect(decide(policy({ blockChannels: ["C1"] }), slack, false)).toEqual({ answer: false, reason: "channel C1 is blocked (policy.blockChannels)" });
    expect(decide(policy({ allowChannels: ["C1"] }), slack, false)).toMatchObject({ answer: true });
  });
});
