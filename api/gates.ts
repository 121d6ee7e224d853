/**
 * `ensoul/gates`: skill gates (`Gate`, the chain, the built-in bouncer, length, budget and
 * approval gates, remote skill-gate actors), for writing a gate of your own. The folder's
 * index.ts is its public surface (DESIGN.md).
 */
export * from "../actors/gate/index.ts";
