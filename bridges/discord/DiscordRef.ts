/**
 * What the ledger keeps of a reply posted on Discord: where and which message, and how it was
 * made, which decides how it is edited (also after a restart): by the bot for a daimon, with its
 * prefix, or through this bridge's channel webhook.
 */
import type { PostedRef } from "../core/index.ts";

export interface DiscordRef extends PostedRef {
  /** Posted by the bot for this daimon, with its prefix. */
  daimon?: string;
  /** Posted through this bridge's channel webhook. */
  webhook?: boolean;
}
