/**
 * Where a soul is in its life: taking perceptions (`active`), finishing its turn before a
 * stop, stopped, or ended by its own blueprint. Its own file because the runtime sets it and
 * the intake reads it, and neither should import the other for a word.
 */
export type SoulStatus = "active" | "stopping" | "stopped" | "expired";
