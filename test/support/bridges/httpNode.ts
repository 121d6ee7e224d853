/**
 * A real node running the echo soul behind an HTTP bridge on a loopback port, for the HTTP
 * bridge's integration tests: where it listens, a client's POST with an Idempotency-Key, and
 * what the node counts of it (the bridge's counters, one metric).
 */
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../cluster/blueprints.ts";

export interface HttpNode {
  node: EnsoulNode;
  /** `http://127.0.0.1:<port>`: the soul is at `${base}/v1/souls/echo/`. */
  base: string;
  /** POST /v1/souls/echo/perceptions as Ada, under `key`. */
  post(content: string, key: string): Promise<Response>;
}

export async function startHttpNode(o: { cluster: string; data: string; token: string; options?: Record<string, unknown> }): Promise<HttpNode> {
  const config = parseClusterConfig({
    cluster: o.cluster,
    souls: [{ id: "echo", blueprint: echoSoul }],
    bridges: [{ type: "http", soul: "echo", options: { port: 0, ...o.options } }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
  const node = await startNode({ config, data: o.data, store: { noSync: true }, env: { ENSOUL_HTTP_TOKEN: o.token }, metrics: true, log: () => undefined });
  const base = node.status().bridges![0]!.url!.replace(/\/v1\/souls\/echo\/$/, "");
  const post = (content: string, key: string) =>
    fetch(`${base}/v1/souls/echo/perceptions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${o.token}`, "Content-Type": "application/json", "Idempotency-Key": key },
      body: JSON.stringify({ content, name: "Ada" }),
    });
  return { node, base, post };
}

/** The bridge's counters, as `ensoul status` shows them. */
export function bridgeCounters(node: EnsoulNode): Record<string, number> {
  return node.status().bridges![0]!.counters;
}

/** One series of the node's metrics without labels (`ensoul_perceptions_deduplicated_total`). */
export async function metric(node: EnsoulNode, name: string): Promise<number> {
  const line = (await node.metrics!.text()).split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.slice(name.length + 1));
}
