/**
 * The offline model's deterministic choices: a stable hash, and a pick from a list keyed by it.
 *
 * It exists on its own because the conversation reader (for the seed), the answers and the
 * JSON schema values all choose the same way, so the same request always gets the same answer.
 */

/** One of the items, chosen by the seed and a salt that names the choice. */
export function pick<T>(items: readonly T[], seed: number, salt: string): T {
  return items[fnv1a(`${seed}:${salt}`) % items.length];
}

/** FNV-1a, 32 bit: small, stable across platforms, good enough to spread choices. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
