/**
 * The Discord bridge's `options` in the cluster config, checked with a clear error, so a typo
 * fails the bridge's start instead of silently changing what the soul answers:
 *
 *   - type: discord
 *     soul: claudius
 *     options: { policy: { reply: mentions, dms: true }, daimonWebhooks: false }
 *
 * The token and the REST base are not options: they come from the environment
 * (`DISCORD_TOKEN`, `DISCORD_API_URL`), so a config file can be shared without its secret.
 */
import { z } from "zod";
import { bridgePolicySchema, ledgerBoundsSchema, streamBoundsSchema } from "../core/index.ts";

export const discordOptionsSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]+$/).optional(),
  policy: bridgePolicySchema.optional(),
  /**
   * false: a daimon's words are posted by the bot with a clear prefix (`**Name:** `).
   * true: through a channel webhook under the daimon's own name (needs Manage Webhooks).
   */
  daimonWebhooks: z.boolean().default(false),
  /** What the ledger keeps and the streams followed at once (bridges/core/bridgeBounds.ts). */
  ledger: ledgerBoundsSchema.optional(),
  streams: streamBoundsSchema.optional(),
});

export type DiscordBridgeOptions = z.infer<typeof discordOptionsSchema>;

export function parseDiscordOptions(options: unknown): DiscordBridgeOptions {
  const parsed = discordOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw new Error(`discord bridge options: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
