/**
 * Slack events in: each event Bolt hands the bridge becomes a PlatformMessage (slackMessages.ts)
 * with the person's name, and goes to the core's `receive`, which applies the policy and the
 * ledger. Resolves once the perception is stored on the bus, so the event is acknowledged only
 * then (AckAfterReceiveApp); rejects otherwise, and Slack retries.
 *
 * Slack sends an `app_mention` and a `message` event for one mention, often at the same
 * moment: the core's `receive` takes messages with one id one after the other, so the second
 * is a plain duplicate of the first rather than a race to publish it.
 */
import type { BridgeRuntime, ReceiveResult } from "../core/index.ts";
import type { SlackIdentity } from "./slackIdentity.ts";
import { slackMessageOf } from "./slackMessages.ts";
import type { SlackNames } from "./SlackNames.ts";

export class SlackIntake {
  constructor(
    private readonly runtime: BridgeRuntime,
    private readonly me: SlackIdentity,
    private readonly names: SlackNames,
  ) {}

  async take(event: Record<string, unknown>): Promise<ReceiveResult | undefined> {
    const message = slackMessageOf(event, this.me);
    if (!message) return undefined;
    // The bridge's own posts (a daimon's under its own name too) are never a person's words.
    if (!message.own && !message.fromBot) message.userName = await this.names.of(message.userId);
    return this.runtime.receive(message);
  }
}
