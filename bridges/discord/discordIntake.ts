/**
 * Discord's messages into the bridge runtime, one at a time and in the order the gateway
 * delivered them, so a soul perceives a conversation in the order it was typed. The runtime
 * decides (policy, duplicates) and publishes.
 *
 * Discord does not deliver a message again, so nothing here may wait for a next start: a
 * message whose perception the bus could not store stays in the ledger and is published again
 * with backoff while the node runs (PerceptionBacklog.ts), the messages after it kept behind
 * it; a message arriving while the node stops is kept in the ledger for the next start.
 */
import { Events, type Client, type Message } from "discord.js";
import type { BridgeRuntime, PlatformMessage } from "../core/index.ts";
import type { DaimonWebhooks } from "./DaimonWebhooks.ts";
import { platformMessageOf, withThreadParent } from "./discordMessages.ts";
import { PerceptionBacklog } from "./PerceptionBacklog.ts";

export interface DiscordIntake {
  /**
   * Hands messages to the runtime from now on (those received before wait): only once the
   * runtime follows the soul's speech, or an answer could be said before anyone listens.
   */
  open(): void;
  /** Stops listening; resolves once the messages already received are handed to the runtime. */
  close(): Promise<void>;
}

export function listenForMessages(client: Client, runtime: BridgeRuntime, webhooks: DaimonWebhooks | undefined, backlog = new PerceptionBacklog(runtime)): DiscordIntake {
  let opened = false;
  let open!: () => void;
  let tail = new Promise<void>((resolve) => (open = resolve));
  const take = async (message: Message) => {
    const botId = client.user?.id;
    if (!botId) return;
    await withThreadParent(client, message);
    const platformMessage = platformMessageOf(message, { botId, applicationId: client.application?.id, ownsWebhook: (id) => webhooks?.owns(id) ?? false });
    // Its own posts come back on the gateway: nothing to take, not even while the node stops.
    if (!platformMessage || platformMessage.own) return;
    await hand(runtime, backlog, platformMessage);
  };
  const onMessage = (message: Message) => {
    // One odd message must not stop the line: the chain goes on whatever happened to it.
    tail = tail.then(() => take(message)).catch((err: unknown) => runtime.report(err, `taking Discord message ${message.id}`));
  };
  client.on(Events.MessageCreate, onMessage);
  return {
    open() {
      opened = true;
      // Messages a start could not publish again (the bus away at start) are the backlog's.
      if (runtime.ledger.unpublished().length > 0) backlog.start();
      open();
    },
    async close() {
      client.off(Events.MessageCreate, onMessage);
      backlog.close();
      if (opened) await tail;
    },
  };
}

/** Publishes the message, or keeps it behind those waiting for the bus, or, the node stopping, for the next start. */
async function hand(runtime: BridgeRuntime, backlog: PerceptionBacklog, message: PlatformMessage): Promise<void> {
  if (!backlog.waiting && !runtime.intakeClosed) {
    try {
      await runtime.receive(message);
      return;
    } catch (err) {
      // Its publish failed (the runtime said so): kept unpublished, it is the backlog's now.
      if (runtime.ledger.taken(message.id)?.unpublished) return backlog.start();
      if (!runtime.intakeClosed) throw err;
    }
  }
  await runtime.keep(message);
  // Kept just as the backlog emptied: it starts again for this one.
  if (!runtime.intakeClosed && runtime.ledger.taken(message.id)?.unpublished) backlog.start();
}
