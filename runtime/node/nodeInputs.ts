/**
 * The step of a node's start that opens the ways in, once its souls can answer: whispers,
 * souls hearing souls (one durable consumer per listener and speaker), and perceptions from
 * the node's durable consumers through the intake that records each in the soul's inbox
 * before it is acked.
 */
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import { streamName, type DurableConsumer, type Subscription } from "../bus/index.ts";
import { startHearings } from "./hearing.ts";
import type { NatsConnectOptions } from "./natsConnection.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodeOutput } from "./nodeOutput.ts";
import type { NodePlan } from "./nodePlan.ts";
import { startNodePerceptionSources } from "./nodePerceptionSources.ts";
import type { NodeSouls } from "./nodeSouls.ts";
import { createPerceptionIntake } from "./perceptionIntake.ts";
import type { PerceptionSource } from "./perceptionSources.ts";
import type { NodeRegistryStep } from "./registryFeed.ts";
import { watchStrayPerceptions } from "./strayPerceptions.ts";
import { subscribeWhispers } from "./whisperIntake.ts";

export interface NodeInputs {
  readonly whispers: Subscription;
  readonly hearings: readonly DurableConsumer[];
  readonly source: PerceptionSource;
}

/** Each input opened is pushed onto `cleanups` at once, so that a start failing later closes it. */
export async function openNodeInputs(
  plan: NodePlan,
  { bus, subjects }: NodeGround,
  parts: { feed: NodeRegistryStep; output: NodeOutput; souls: NodeSouls; nats?: NatsConnectOptions | undefined },
  cleanups: (() => Promise<void>)[],
): Promise<NodeInputs> {
  const { config, nodeId, hosted, known, blueprints, reportsUnknown } = plan;
  const { feed, output, souls } = parts;
  // The souls this node runs now: its config's, or under automatic placement those the live nodes give it.
  const hosts = (id: string) => souls.owns(id);
  const knows = (id: string) => known.has(id);

  const whispers = subscribeWhispers(bus, subjects, { hosts, knows, reportsUnknown, soul: souls.soulOf, count: feed.count, report: plan.report });
  cleanups.push(async () => whispers.unsubscribe());
  // Stored perceptions no consumer can deliver (a literal `>` for the soul): reported once, by this node.
  if (reportsUnknown && bus.kind === "nats") cleanups.push(watchStrayPerceptions(bus, subjects, () => feed.count("dead")));

  const hearings = await startHearings(bus, subjects, plan.hostedConfigs, (speaker) => (blueprints.get(speaker) as SoulBlueprint).name, {
    ackWaitMs: config.runtime.ackWaitMs,
    onHeard: () => feed.count("heard"),
  });
  cleanups.push(async () => void (await Promise.all(hearings.map((h) => h.stop()))));

  const intake = createPerceptionIntake(
    {
      bus,
      hosts,
      knows,
      reportsUnknown,
      blueprint: (id) => blueprints.get(id) as SoulBlueprint,
      soul: souls.soulOf,
      approvals: (id) => output.approvals.get(id),
      events: output.events,
      rememberSender: output.rememberSender,
      count: feed.count,
    },
    { holds: plan.onJetStream },
  );
  const source = await startNodePerceptionSources(bus, subjects, nodeId, {
    ackWaitMs: config.runtime.ackWaitMs,
    handler: intake,
    room: (id) => feed.live.get(id)?.room(),
    report: plan.report,
    ...(parts.nats && plan.onJetStream
      ? { jetStream: { nats: parts.nats, stream: streamName(config.cluster), maxInFlight: config.runtime.maxInFlight, name: `ensoul-${config.cluster}-${nodeId}-perceptions` } }
      : {}),
  });
  cleanups.push(() => source.stop());
  return { whispers, hearings, source };
}
