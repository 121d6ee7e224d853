/**
 * `ensoul/bridges`: platform bridges (Slack, Discord, HTTP) and the core a new bridge is
 * built on. The folder's index.ts is its public surface (DESIGN.md).
 */
export * from "../bridges/index.ts";
