/**
 * The bus a node joins: the one it was given (which must serve the config's cluster), a NATS
 * connection, or an in-process bus for a single-process run.
 *
 * It exists apart from the node's assembly because choosing and opening the bus is the one
 * step that differs between a single process and a cluster; the node closes a bus it opened.
 */
import { createInProcessBus, type Bus } from "../bus/index.ts";
import type { ClusterConfig } from "./clusterConfig.ts";
import { connectClusterBus } from "./natsConnection.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";

export async function joinBus(options: Pick<StartNodeOptions, "bus" | "nats">, config: ClusterConfig, nodeId: string, report: (err: unknown, what: string) => void): Promise<Bus> {
  if (options.bus) {
    if (options.bus.cluster !== config.cluster) throw new Error(`the bus serves cluster '${options.bus.cluster}', the config is for '${config.cluster}'`);
    return options.bus;
  } else if (options.nats) {
    return await connectClusterBus({ ...options.nats, cluster: config.cluster, name: `ensoul-${config.cluster}-${nodeId}`, replicas: config.runtime.replicas, onHandlerError: (err, ctx) => report(err, `handler on ${ctx.consumer ?? ctx.subject}`) });
  } else {
    return createInProcessBus({ cluster: config.cluster, onHandlerError: (err, ctx) => report(err, `handler on ${ctx.consumer ?? ctx.subject}`) });
  }
}
