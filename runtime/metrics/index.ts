/**
 * Metrics: ensoul's counters, gauges and histograms in Prometheus form (prom-client), and the
 * HTTP endpoint that serves them. The node feeds them (runtime/node/nodeMetrics.ts); this
 * folder knows nothing of souls beyond the labels it is given.
 */
export { createEnsoulMetrics, type EnsoulMetrics, type MetricsSources } from "./ensoulMetrics.ts";
export { MetricsAddressError, parseMetricsAddress, serveMetrics, type MetricsAddress, type MetricsServer, type MetricsSource } from "./metricsServer.ts";
