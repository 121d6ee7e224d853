/**
 * A node's perceptions come in on two subjects of the cluster stream, one durable consumer
 * each (nats-server 2.9 gives a consumer one filter):
 *
 * - `ensoul.<cluster>.soul.*.perceive`, consumer `node-<nodeId>`: what anyone allowed to
 *   perceive sends (bridges, daimons that speak, souls hearing souls);
 * - `ensoul.<cluster>.soul.*.internal`, consumer `node-<nodeId>-internal`: perceptions in the
 *   soul's own voice or routed to a process, which NATS permissions let only nodes publish
 *   (docs/SECURITY.md 2.5). The intake refuses those fields on `perceive`.
 *
 * Both feed the same intake. Each soul's order holds within a subject, not across the two:
 * an internal perception is not a reply to anything on `perceive`.
 */
import type { ClusterSubjects, Bus } from "../bus/index.ts";
import { jetStreamPerceptionSource, type JetStreamSourceOptions } from "./jetStreamPerceptionSource.ts";
import { busPerceptionSource, type PerceptionSource, type SourceOptions } from "./perceptionSources.ts";

type SourceStart = SourceOptions & { jetStream?: Omit<JetStreamSourceOptions, keyof SourceOptions | "bus"> };
export type NodeSourceOptions = Omit<SourceStart, "filter" | "consumer">;

/**
 * One source: the node's own JetStream consumer when it joined a cluster on NATS (`jetStream`),
 * else the bus's durable consumer (the in-process bus, or a Bus the caller handed in).
 */
function startPerceptionSource(bus: Bus, o: SourceStart): Promise<PerceptionSource> {
  const { jetStream, ...source } = o;
  return jetStream ? jetStreamPerceptionSource({ ...source, ...jetStream, bus }) : busPerceptionSource(bus, source);
}

export async function startNodePerceptionSources(bus: Bus, subjects: ClusterSubjects, nodeId: string, o: NodeSourceOptions): Promise<PerceptionSource> {
  const consumers = [
    { verb: "perceive" as const, consumer: `node-${nodeId}`, suffix: "" },
    { verb: "internal" as const, consumer: `node-${nodeId}-internal`, suffix: "-internal" },
  ];
  const sources: PerceptionSource[] = [];
  try {
    for (const c of consumers) {
      const { jetStream, ...rest } = o;
      sources.push(
        await startPerceptionSource(bus, {
          ...rest,
          filter: subjects.allSouls(c.verb),
          consumer: c.consumer,
          ...(jetStream ? { jetStream: { ...jetStream, name: `${jetStream.name}${c.suffix}` } } : {}),
        }),
      );
    }
  } catch (err) {
    await Promise.all(sources.map((s) => s.stop().catch(() => undefined)));
    throw err;
  }
  return {
    closed: Promise.all(sources.map((s) => s.closed)).then(() => undefined),
    async stop() {
      await Promise.all(sources.map((s) => s.stop()));
    },
  };
}
