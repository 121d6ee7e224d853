/**
 * Whether this run is CI. Any non-empty `CI` counts (`true`, `1`, `yes`: every CI system
 * spells it its own way), because a missing binary that only fails under `CI=true` would
 * skip silently, and report green, under every other spelling.
 */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.CI ?? "") !== "";
}
