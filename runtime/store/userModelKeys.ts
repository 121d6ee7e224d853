/**
 * Where a user model lives under its soul's `userModels` namespace. User ids come from the
 * outside world (a display name, a platform id) and may hold anything, but a kv key part may
 * not hold control characters (0x00 is lmdb's element delimiter). So:
 *
 * - an id that is a valid key part (every id stored before ids were encoded) is its own key:
 *   `[userId, version]`, so models saved under plain names are still found;
 * - any other id (`"Ada\nLovelace"`) is escaped and tagged: `[0, escaped, version]`. A number
 *   is never a user id, so no plain id can collide with an escaped one, and the escaping
 *   (`%` and control characters as `%XX`) is undone exactly when the key is read back.
 */
import type { KeyPart } from "./keys.ts";

/** The first part of an escaped user id's key. */
const ESCAPED = 0;
// The same characters `assertKeyPart` refuses.
const CONTROL = /[\u0000-\u001f\u007f]/;
const TO_ESCAPE = /[%\u0000-\u001f\u007f]/g;

function escapeUserId(userId: string): string {
  return userId.replace(TO_ESCAPE, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

function unescapeUserId(escaped: string): string {
  return escaped.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The key parts every version of one user's model starts with. */
export function userModelPrefix(userId: string): KeyPart[] {
  return CONTROL.test(userId) ? [ESCAPED, escapeUserId(userId)] : [userId];
}

/** The key of one version of one user's model. */
export function userModelKey(userId: string, version: number): KeyPart[] {
  return [...userModelPrefix(userId), version];
}

/** The user id a key was made for, or undefined for a key that is not a user model's. */
export function userOfModelKey(key: readonly KeyPart[]): string | undefined {
  if (key.length === 2 && typeof key[0] === "string") return key[0];
  if (key.length === 3 && key[0] === ESCAPED && typeof key[1] === "string") return unescapeUserId(key[1]);
  return undefined;
}
