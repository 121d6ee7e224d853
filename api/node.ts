/**
 * `ensoul/node`: hosting souls as `ensoul up` does: `startNode` from a cluster config
 * (`loadClusterConfig`, `parseClusterConfig`), and the client the other commands use to
 * talk to running nodes. The folder's index.ts is its public surface (DESIGN.md).
 */
export * from "../runtime/node/index.ts";
// Serving a node's metrics (what `ensoul up --metrics` does), for a node started in code.
export { parseMetricsAddress, serveMetrics, type MetricsAddress, type MetricsServer, type MetricsSource } from "../runtime/metrics/index.ts";
