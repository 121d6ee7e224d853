/**
 * The failover bench's cluster config for `ensoul up` children: echo souls (no model call,
 * test/support/cluster/blueprints.ts) under `placement: auto` with failover on, its shape
 * from the child's environment:
 *
 *   BENCH_CLUSTER   cluster name (required)
 *   BENCH_SOULS     how many souls, `s0`, `s1`, ... (default 30)
 *   BENCH_LEASE_MS  runtime.failover.leaseMs (default 2000)
 */
import { echoSoul } from "../cluster/blueprints.ts";

const cluster = process.env.BENCH_CLUSTER;
if (!cluster) throw new Error("failoverFleet.config.ts needs BENCH_CLUSTER");
const count = Number(process.env.BENCH_SOULS ?? 30);

export default {
  cluster,
  placement: "auto",
  souls: Array.from({ length: count }, (_, i) => ({ id: `s${i}`, blueprint: echoSoul, streamChunks: false })),
  runtime: { heartbeatMs: 250, ackWaitMs: 2_000, failover: { leaseMs: Number(process.env.BENCH_LEASE_MS ?? 2_000) } },
};
