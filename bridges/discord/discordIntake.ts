/**
 * Discord's messages into the bridge runtime, one at a time and in the order the gateway
 * delivered them, so a soul perceives a conversation in the order it was typed. The runtime
 * decides (policy, duplicates) and publishes; Discord does not redeliver a message it sent
 * once, so what fails here is reported, and the ledger publishes a message taken but not yet
 * on the bus again at the next start.
 */
import { Events, type Client, type Message } from "discord.js";
import type { BridgeRuntime } from "../core/index.ts";
import type { DaimonWebhooks } from "./DaimonWebhooks.ts";
import { platformMessageOf, withThreadParent } from "./discordMessages.ts";

export interface DiscordIntake {
  /**
   * Hands messages to the runtime from now on (those received before wait): only once the
   * runtime follows the soul's speech, or an answer could be said before anyone listens.
   */
  open(): void;
  /** Stops listening; resolves once the messages already received are handed to the runtime. */
  close(): Promise<void>;
}

export function listenForMessages(client: Client, runtime: BridgeRuntime, webhooks: DaimonWebhooks | undefined): DiscordIntake {
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
    await runtime.receive(platformMessage).catch((err: unknown) => runtime.report(err, `taking Discord message ${message.id}`));
  };
  const onMessage = (message: Message) => {
    // One odd message must not stop the line: the chain goes on whatever happened to it.
    tail = tail.then(() => take(message)).catch((err: unknown) => runtime.report(err, `reading Discord message ${message.id}`));
  };
  client.on(Events.MessageCreate, onMessage);
  return {
    open() {
      opened = true;
      open();
    },
    async close() {
      client.off(Events.MessageCreate, onMessage);
      if (opened) await tail;
    },
  };
}
