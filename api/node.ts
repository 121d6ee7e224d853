/**
 * `ensoul/node`: hosting souls as `ensoul up` does: `startNode` from a cluster config
 * (`loadClusterConfig`, `parseClusterConfig`), and the client the other commands use to
 * talk to running nodes. The folder's index.ts is its public surface (DESIGN.md).
 */
export * from "../runtime/node/index.ts";
