/**
 * The Discord bridge (discord.js): mentions, DMs and thread follow-ups in as perceptions, the
 * soul's speech out as replies, streamed by editing, each posted once (the ledger, which looks
 * on Discord for a post whose answer was lost, and the nonce).
 */
export { startDiscordBridge } from "./DiscordBridge.ts";
export { discordOptionsSchema, parseDiscordOptions, type DiscordBridgeOptions } from "./discordOptions.ts";
export { discordNonce, NONCE_MAX } from "./discordNonce.ts";
export { platformMessageOf, stripMention, type DiscordSelf } from "./discordMessages.ts";
export { DAIMON_LIMIT, DISCORD_EDIT_INTERVAL_MS, DISCORD_LIMIT, daimonPrefix } from "./DiscordOutlet.ts";
export type { DiscordRef } from "./DiscordRef.ts";
export { FIND_PAGES } from "./findLostPost.ts";
export { PUBLISH_RETRY_FIRST_MS, PUBLISH_RETRY_MAX_MS, publishRetryDelay } from "./PerceptionBacklog.ts";
export { TypingIndicator, TYPING_REPEAT_MS } from "./TypingIndicator.ts";
