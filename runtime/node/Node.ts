/**
 * A node: one process of a cluster. It reads the cluster config, opens its LMDB
 * environment (`<data>/<nodeId>`), joins the bus (NATS, or the in-process bus for a
 * single-process run) and hosts the souls the config gives it, with everything around them:
 *
 * - perceptions in from its durable consumers (nodePerceptionSources.ts, perceptionIntake.ts),
 *   each recorded in the soul's inbox before it is acked;
 * - speech out on each soul's says subject, events on its events subject (busOutlet.ts,
 *   soulEvents.ts), behind the soul's gate chain (gates.ts) and approval queue, each turn's
 *   event naming the speech it will deliver (soulRouter.ts);
 * - whispers in (whisperIntake.ts), souls hearing souls (hearing.ts), daimons (daimons.ts),
 *   the skill-gate and tool actors it serves;
 * - activation on demand and passivation of idle souls (the soul host), a registry of its
 *   actors (nodeRegistry.ts), and node control: heartbeat, status, memory, daimon, stop
 *   (nodeControl.ts).
 *
 * `stop()` shuts down in the order that loses nothing: no new perceptions (those in flight
 * finish and are acked), no new whispers or hearings, daimons off, each soul stops after its
 * running turn (queued perceptions stay in its inbox for the next start), everything said
 * is published, the bus drains, and the store closes with every committed turn on disk. A
 * step that fails is reported and the rest still run (nodeShutdown.ts).
 */
import type { SkillGateHandle } from "../../actors/gate/index.ts";
import type { ToolActorHandle } from "../../actors/tool/index.ts";
import { soulMachineJson, type Soul } from "../../actors/soul/index.ts";
import type { Bus, ClusterSubjects } from "../bus/index.ts";
import type { MetricsSource } from "../metrics/index.ts";
import type { Store } from "../store/index.ts";
import type { DaimonStatusEntry, NodeStatus, SoulMemoryReply } from "./controlProtocol.ts";
import { hostedDaimons, startDaimons, type NodeDaimons } from "./daimons.ts";
import { startNodeBridges, type NodeBridges } from "./nodeBridges.ts";
import { startNodeControl, type NodeControl } from "./nodeControl.ts";
import { openNodeInputs, type NodeInputs } from "./nodeInputs.ts";
import { closeNodeGround, openNodeGround, type NodeGround } from "./nodeOpen.ts";
import { buildNodeOutput, type NodeOutput } from "./nodeOutput.ts";
import { planNode, type NodePlan } from "./nodePlan.ts";
import type { NodeRegistry } from "./nodeRegistry.ts";
import { runShutdown, stopEach, type ShutdownStep } from "./nodeShutdown.ts";
import { nodeStatusReplies } from "./nodeStatusReply.ts";
import { startNodeSkillGates } from "./nodeSkillGates.ts";
import { startNodeTools } from "./nodeTools.ts";
import type { NodeFailover, SoulOwnership } from "./failover/index.ts";
import { startFailoverStep } from "./nodeFailoverStep.ts";
import { hostNodeSouls, type NodeSouls } from "./nodeSouls.ts";
import { startRegistryStep, type NodeRegistryStep } from "./registryFeed.ts";
import { soulHistory } from "./soulHistory.ts";
import { soulMemoryReader } from "./soulMemory.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";
export type { StartNodeOptions } from "./StartNodeOptions.ts";

export interface EnsoulNode {
  readonly id: string;
  readonly cluster: string;
  readonly bus: Bus;
  readonly subjects: ClusterSubjects;
  readonly store: Store;
  /** The node's actors, reactive (@xstate/store). */
  readonly registry: NodeRegistry;
  /** Ids of the souls this node hosts. */
  readonly souls: readonly string[];
  /** With `metrics: true`: the node's metrics in Prometheus form (serve them with runtime/metrics `serveMetrics`). */
  readonly metrics?: MetricsSource;
  /** The live soul (activated from LMDB if it was passivated). */
  soul(id: string): Promise<Soul>;
  status(): NodeStatus;
  /** This node runs the soul now: the config places it here, or automatic placement does. */
  owns(soulId: string): boolean;
  memory(soulId: string): SoulMemoryReply;
  setDaimonMode(soulId: string, mode: string, name?: string): DaimonStatusEntry[];
  /** Resolves when every live soul is idle and everything said so far has been published. */
  idle(): Promise<void>;
  /** Drains and shuts down (see the file comment); every call gets the same promise, a NodeStopError if a step failed. */
  stop(): Promise<void>;
  /** Resolves once the node has stopped, whoever stopped it (`stop()`, a `stop` control request). */
  readonly stopped: Promise<void>;
}

export async function startNode(options: StartNodeOptions): Promise<EnsoulNode> {
  const plan = planNode(options);
  const ground = await openNodeGround(options, plan);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    return await assemble(options, plan, ground, cleanups);
  } catch (err) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await closeNodeGround(ground);
    throw err;
  }
}

/** The steps of a start, in the order that lets nothing reach a soul before what it needs is there. */
async function assemble(options: StartNodeOptions, plan: NodePlan, ground: NodeGround, cleanups: (() => Promise<void>)[]): Promise<EnsoulNode> {
  const { bus, store } = ground;
  const { config, nodeId, report } = plan;
  const inspect = options.inspect ? { inspect: options.inspect } : {};

  const feed = startRegistryStep(plan, store, bus.kind);
  cleanups.push(async () => feed.stopFlushing());
  const { registry, live } = feed;
  const metrics = options.metrics ? (await import("./nodeMetrics.ts")).createNodeMetrics(plan, feed, bus) : undefined; // prom-client only when asked for
  cleanups.push(async () => metrics?.stop());
  const output = buildNodeOutput(plan, ground, { live, changed: (soulId) => feed.dirty.add(soulId), spent: feed.spent, ...(options.registry ? { registry: options.registry } : {}), ...(metrics ? { metrics } : {}) });
  // Under failover the node holds its lease before any soul runs, and stops if it loses it.
  const { failover, ownership, follow } = await startFailoverStep(plan, ground, cleanups);
  const souls = hostNodeSouls(plan, ground, feed, output, options.inspect, failover, ownership);
  const moves = follow(souls.host);

  // Served (and confirmed by the bus) before any soul runs a turn that may ask them.
  const skillGates = await startNodeSkillGates({ bus, config, nodeId, placement: plan.placement, gateContext: output.gateContext, registry, ...inspect });
  cleanups.push(async () => void (await Promise.all(skillGates.map((g) => g.stop()))));
  const toolActors = await startNodeTools(config.tools, nodeId, bus, config.cluster);
  cleanups.push(async () => void (await Promise.all(toolActors.map((t) => t.stop()))));
  await souls.resumeLeftovers();

  // Under automatic placement a daimon attends only while its soul runs here.
  const runs = ownership ? { runs: souls.owns } : {};
  const daimons: NodeDaimons = startDaimons({ bus, cognitionOf: output.daimonCognition, daimons: hostedDaimons(plan), onChange: (d) => registry.trigger.daimonSet(d), onError: report, ...runs, ...inspect });
  cleanups.push(() => daimons.stop());

  const inputs = await openNodeInputs(plan, ground, { feed, output, souls, nats: options.nats }, cleanups);
  // Last: a bridge takes people's messages once everything that answers them runs.
  const bridges = await startNodeBridges(plan, ground, { registry, daimons, ...inspect });
  cleanups.push(() => bridges.stop());

  const memory = soulMemoryReader({ nodeId, hosted: plan.hosted, known: plan.known, store, live, blueprints: plan.blueprints });
  // Under automatic placement a node lists the souls it runs now, and why they are here.
  const placed = ownership ? { lists: souls.owns, placementOf: (id: string) => ownership.placeOf(id).why } : {};
  const statusReplies = nodeStatusReplies(registry, { flush: () => feed.flush(true), ...placed });
  const status = (): NodeStatus => statusReplies.full();
  const setDaimonMode = (soulId: string, mode: string, name?: string) => daimons.setMode(soulId, mode, name);
  const { hosted, known, blueprints } = plan;
  const statusOf = (id: string) => statusReplies.entry(id);
  const history = soulHistory({ nodeId, hosted, known, blueprints, store, host: souls.host, statusOf, machineOf: soulMachineJson, events: output.events, now: () => Date.now(), ...(failover ? { failover } : {}) });
  const control: NodeControl = startNodeControl(
    bus,
    ground.subjects,
    nodeId,
    config.runtime.heartbeatMs,
    {
      heartbeat: statusReplies.heartbeat,
      status: statusReplies.reply,
      memory,
      daimon: (req) => ({ soulId: req.soulId, daimons: setDaimonMode(req.soulId, req.mode, req.name) }),
      soul: history.soul,
      turns: history.turns,
      revert: history.revert,
      stop: () => void node.stop().catch(() => undefined), // each failed step is reported as it fails
    },
    report,
  );
  registry.trigger.stateChanged({ state: "running" });
  control.beat();
  failover?.lost
    .then((why) => {
      report(new Error(why), `node ${nodeId} stops: it may no longer speak for its souls`);
      return node.stop();
    })
    .catch(() => undefined); // each failed step of the stop is reported as it fails

  const shutdown = () => (souls.closeDoors(), runShutdown(nodeId, report, shutdownSteps(plan, ground, { feed, output, souls, skillGates, toolActors, failover, ownership, moves, daimons, inputs, bridges, control })));
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let stopping: Promise<void> | undefined;
  const node: EnsoulNode = {
    id: nodeId,
    cluster: config.cluster,
    bus,
    subjects: ground.subjects,
    store,
    registry,
    souls: [...plan.hosted.keys()],
    ...(metrics ? { metrics } : {}),
    soul: souls.soulOf,
    owns: souls.owns,
    status,
    memory,
    setDaimonMode,
    async idle() {
      for (;;) {
        await Promise.all([...live.values()].map((s) => s.idle()));
        await output.busOutlet.settled();
        if ([...live.values()].every((s) => !s.state().running && s.state().pending === 0)) return;
      }
    },
    stop() {
      stopping ??= shutdown().finally(resolveStopped);
      return stopping;
    },
    stopped,
  };
  return node;
}

interface RunningNode {
  feed: NodeRegistryStep;
  output: NodeOutput;
  souls: NodeSouls;
  skillGates: readonly SkillGateHandle[];
  toolActors: readonly ToolActorHandle[];
  failover: NodeFailover | undefined;
  ownership: SoulOwnership | undefined;
  moves: { stop(): void } | undefined;
  daimons: NodeDaimons;
  inputs: NodeInputs;
  bridges: NodeBridges;
  control: NodeControl;
}

/** The order that loses nothing (the file comment says why). */
function shutdownSteps({ hosted }: NodePlan, { bus, ownsBus, store }: NodeGround, n: RunningNode): ShutdownStep[] {
  const { feed, output, souls, inputs, control } = n;
  return [
    ["announcing the stop", () => (feed.registry.trigger.stateChanged({ state: "stopping" }), control.beat())],
    // A running turn whose record cannot reach the history (NATS away) must not hold the stop for
    // ever: the perception consumer's stop below waits for that turn.
    ["no more waiting for NATS to take a soul's record", () => n.failover?.stopRetrying()],
    ["closing the bridges to new messages", () => n.bridges.closeIntake()],
    ["no more souls moving", () => (n.ownership?.stop(), n.moves?.stop())],
    ["stopping the perception consumer", () => inputs.source.stop()],
    ["stopping the hearings", () => stopEach(inputs.hearings, (h) => h.stop(), (h) => `hearing ${h.name}`)],
    ["stopping the whispers", () => (inputs.whispers.unsubscribe(), inputs.whispers.closed)],
    ["stopping daimons", () => n.daimons.stop()],
    ["stopping the souls", () => stopEach(feed.live.values(), (s) => s.stop(), (s) => `soul ${s.id}`)],
    ["closing the soul host", () => (feed.flush(true), souls.host.close())],
    ["publishing what was said", () => output.busOutlet.settled()],
    ["publishing gate decisions", () => output.decisions.flush()],
    // Everything its souls committed is in their histories: another node may take them at once.
    ["releasing the node's lease", () => n.failover?.release()],
    ["stopping the bridges", () => n.bridges.stop()],
    ["stopping skill gates", () => stopEach(n.skillGates, (g) => g.stop(), (g) => `skill gate ${g.skill}`)],
    ["stopping tool actors", () => stopEach(n.toolActors, (t) => t.stop(), (t) => `tool ${t.tool}`)],
    ["marking the souls stopped", () => (feed.stopFlushing(), feed.markStopped(hosted.keys()), control.beat())],
    ["stopping node control", () => control.stop()],
    ["stopping the metrics", () => output.metrics?.stop()],
    ["draining the bus", () => ownsBus && bus.drain()],
    ["closing the store", () => store.close()],
  ];
}
