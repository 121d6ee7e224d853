/**
 * A perception: something the soul noticed. The shape follows Open Souls (`action`,
 * `content`, `name`) so blueprints read perceptions as they always have.
 */
export interface Perception {
  /** Envelope id; the inbox key that makes redelivery harmless. */
  id: string;
  /** What happened: "said", "joined", "reacted", or a scheduled event's name. */
  action: string;
  content: string;
  /** Who it came from (a user name, a soul name). */
  name: string;
  /** True for perceptions the soul made itself (scheduled events): they enter memory as its own. */
  internal?: boolean;
  /** Routes a scheduled perception to a named process, with its params. */
  process?: string;
  params?: Record<string, unknown>;
  /** Bridge-specific detail (channel, thread, user id): passed through, never interpreted here. */
  meta?: Record<string, unknown>;
  /** Epoch milliseconds. */
  ts: number;
}

/**
 * The `meta` keys by which a bridge names the person who spoke (a stable platform id). A
 * soul files what it learns about someone under them (Claudius's user models), so a voice
 * that is not that person (a daimon speaking in their thread) must not carry them.
 */
export const PERSON_META_KEYS = ["userId", "user_id", "user"] as const;

export type PerceptionInput = Omit<Perception, "id" | "ts"> & Partial<Pick<Perception, "id" | "ts">>;
