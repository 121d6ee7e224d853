/**
 * The bound on a soul's waiting perceptions, and the error a sender gets past it.
 *
 * Why a bound: perceptions waiting behind the running turn live in memory (and the running
 * process sees them all as its pending perceptions), so a burst faster than the soul's turns
 * would grow without limit. Past the bound the soul takes nothing more until a turn takes the
 * next one in line: a caller of `perceive` gets this error and nothing is written, and the
 * node's perception sources wait (`Soul.room()`) instead of taking more for that soul, so the
 * stream keeps them until there is room. A scheduled perception of the soul's own is always
 * taken: it is already stored, and refusing it would lose it.
 */

/** Waiting perceptions a soul keeps when its config says nothing. */
export const DEFAULT_MAX_QUEUED = 1_000;

export class SoulQueueFull extends Error {
  readonly soulId: string;
  readonly limit: number;

  constructor(soulId: string, limit: number) {
    super(`soul '${soulId}' has ${limit} perceptions waiting, its limit (maxQueued); nothing was taken: send it again once the soul has taken some`);
    this.name = "SoulQueueFull";
    this.soulId = soulId;
    this.limit = limit;
  }
}

/** Also across module copies, where `instanceof` may not hold. */
export function isSoulQueueFull(error: unknown): error is SoulQueueFull {
  return error instanceof SoulQueueFull || (error instanceof Error && error.name === "SoulQueueFull");
}
