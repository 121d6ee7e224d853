/**
 * The chaos scenarios' cluster config: a fleet of echo souls (test/support/cluster/blueprints.ts,
 * no model call, `echo: <content>`), so every answer can be matched to its perception by its
 * causation and by its text. An `ensoul up` child reads it; its shape comes from the child's
 * environment, since a chaos test chooses the size:
 *
 *   CHAOS_CLUSTER   cluster name (required)
 *   CHAOS_SOULS     how many souls, `s000`, `s001`, ... (default 20)
 *   CHAOS_NODES     comma-separated node names; souls are dealt round-robin (default `a`)
 *   CHAOS_REPLICAS  runtime.replicas (default 1)
 */
import { echoSoul } from "../cluster/blueprints.ts";
import { fleetSoulId as soulId } from "./fleet.ts";

const cluster = process.env.CHAOS_CLUSTER;
if (!cluster) throw new Error("echoFleet.config.ts needs CHAOS_CLUSTER");
const count = Number(process.env.CHAOS_SOULS ?? 20);
const nodes = (process.env.CHAOS_NODES ?? "a").split(",");

export default {
  cluster,
  nodes,
  souls: Array.from({ length: count }, (_, i) => ({ id: soulId(i), blueprint: echoSoul, node: nodes[i % nodes.length], streamChunks: false })),
  runtime: { heartbeatMs: 250, ackWaitMs: 3_000, replicas: Number(process.env.CHAOS_REPLICAS ?? 1) },
};
