/**
 * The nonce a post carries with `enforce_nonce`: Discord then returns the message already
 * created with it (for a few minutes) instead of creating another, so a post repeated soon
 * after a crash between "posted" and "recorded in the ledger" is the same message. Past those
 * minutes Discord has forgotten it: what decides then is the ledger, and the look on Discord
 * for the post (findLostPost.ts), which comes first anyway.
 *
 * It must be derived, not random: the repeat comes from another process that only knows the
 * speech, the part and the message it answers. Speech ids are unique only within one soul's
 * history (`<soul>:<turn>:<seq>`): a soul started afresh on new data, or another cluster's soul
 * of the same name on the same bot, says `echo:1:0` again. The Discord message answered is
 * unique on Discord, so it is part of the nonce, and those posts stay apart. Discord takes at
 * most 25 characters; 128 bits of a SHA-256 digest in base 36 are at most 25.
 */
import { createHash } from "node:crypto";

export const NONCE_MAX = 25;

/** `answering`: the id of the Discord message the speech replies to. */
export function discordNonce(speechId: string, part: number, answering: string): string {
  const digest = createHash("sha256").update(`${answering}\u0000${speechId}\u0000${part}`).digest();
  return BigInt(`0x${digest.subarray(0, 16).toString("hex")}`).toString(36);
}
