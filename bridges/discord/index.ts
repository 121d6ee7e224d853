/**
 * The Discord bridge (discord.js): mentions, DMs and thread follow-ups in as perceptions, the
 * soul's speech out as replies, streamed by editing, each posted once (nonce + ledger).
 */
export { startDiscordBridge } from "./DiscordBridge.ts";
export { discordOptionsSchema, parseDiscordOptions, type DiscordBridgeOptions } from "./discordOptions.ts";
export { discordNonce, NONCE_MAX } from "./discordNonce.ts";
export { platformMessageOf, stripMention, type DiscordSelf } from "./discordMessages.ts";
export { DAIMON_LIMIT, DISCORD_EDIT_INTERVAL_MS, DISCORD_LIMIT, daimonPrefix, type DiscordRef } from "./DiscordOutlet.ts";
export { TypingIndicator, TYPING_REPEAT_MS } from "./TypingIndicator.ts";
