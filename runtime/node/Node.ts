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
 *   the skill-gate actors it serves;
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
import { publishDecisions } from "../../actors/gate/index.ts";
import { createSoulHost, type Soul, type SoulBlueprint } from "../../actors/soul/index.ts";
import { clusterSubjects, redactSecrets, streamName, type Bus, type ClusterSubjects, type Subscription } from "../bus/index.ts";
import { openStore, type Store } from "../store/index.ts";
import { createBusOutlet } from "./busOutlet.ts";
import { nodeDataDir } from "./dataDirectory.ts";
import { blueprintOf, parseClusterConfig, resolveDaimon, type SoulConfig } from "./clusterConfig.ts";
import type { DaimonStatusEntry, NodeStatus, SoulMemoryReply } from "./controlProtocol.ts";
import { startDaimons, type NodeDaimons } from "./daimons.ts";
import { buildGate, gatesOf, type BuiltGate } from "./gates.ts";
import { startHearings } from "./hearing.ts";
import type { LoadedClusterConfig } from "./loadClusterConfig.ts";
import { nodeCognition } from "./nodeCognition.ts";
import { startNodeControl, type NodeControl } from "./nodeControl.ts";
import { resolveNodeId, runningTwin } from "./nodeIdentity.ts";
import { createNodeRegistry, registryStatus, type NodeRegistry, type RegistrySoul } from "./nodeRegistry.ts";
import { createPerceptionIntake } from "./perceptionIntake.ts";
import { startNodePerceptionSources } from "./nodePerceptionSources.ts";
import { createRegistryFeed, initialRegistrySouls } from "./registryFeed.ts";
import { joinBus } from "./nodeBus.ts";
import type { StartNodeOptions } from "./StartNodeOptions.ts";
export type { StartNodeOptions } from "./StartNodeOptions.ts";
import { createEventPublisher } from "./soulEvents.ts";
import { runShutdown, stopEach } from "./nodeShutdown.ts";
import { soulMemoryReader } from "./soulMemory.ts";
import { createSoulOutlets } from "./soulOutlets.ts";
import { createSoulRouter } from "./soulRouter.ts";
import { startNodeSkillGates } from "./nodeSkillGates.ts";
import { firstNode, soulsElsewhere, soulsFor, type Placement } from "./soulPlacement.ts";
import { watchStrayPerceptions } from "./strayPerceptions.ts";
import { subscribeWhispers } from "./whisperIntake.ts";


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
  /** The live soul (activated from LMDB if it was passivated). */
  soul(id: string): Promise<Soul>;
  status(): NodeStatus;
  memory(soulId: string): SoulMemoryReply;
  setDaimonMode(soulId: string, mode: string, name?: string): DaimonStatusEntry[];
  /** Resolves when every live soul is idle and everything said so far has been published. */
  idle(): Promise<void>;
  /** Drains and shuts down (see the file comment); every call gets the same promise, a NodeStopError if a step failed. */
  stop(): Promise<void>;
  /** Resolves once the node has stopped, whoever stopped it (`stop()`, a `stop` control request). */
  readonly stopped: Promise<void>;
}

const SENDERS_KEPT = 10_000;
const REGISTRY_FLUSH_MS = 100;

export async function startNode(options: StartNodeOptions): Promise<EnsoulNode> {
  const loaded: LoadedClusterConfig =
    "personas" in options.config ? options.config : { config: parseClusterConfig(options.config), file: "cluster config", baseDir: process.cwd(), personas: new Map() };
  const config = loaded.config;
  const env = options.env ?? process.env;
  const placement: Placement = options.placement ?? (options.nats || options.bus ? "assigned" : "all");
  const nodeId = resolveNodeId(options, config, placement);
  // No credential leaves in a log line, whatever it quotes (a NATS error with a URL in it).
  const log = (line: string) => (options.log ?? ((l: string) => process.stderr.write(`[ensoul ${nodeId}] ${l}\n`)))(redactSecrets(line));
  const report = (err: unknown, what: string) => log(`${what}: ${err instanceof Error ? err.message : String(err)}`);

  const hostedConfigs = soulsFor(config, nodeId, placement);
  const hosted = new Map<string, SoulConfig>(hostedConfigs.map((s) => [s.id, s]));
  const known = new Set(config.souls.map((s) => s.id));
  const blueprints = new Map<string, SoulBlueprint>(config.souls.map((s) => [s.id, blueprintOf(s)]));
  const reportsUnknown = config.runtime.deadLetterUnknownSouls && (placement === "all" || nodeId === firstNode(config, nodeId));

  const ownsBus = options.bus === undefined;
  const bus: Bus = await joinBus(options, config, nodeId, report);
  const subjects = clusterSubjects(config.cluster);
  const address = `node-${nodeId}`;
  if (placement === "assigned") {
    // Two processes claiming one node would both host its souls: refuse to be the second.
    const running = await runningTwin(bus, subjects, nodeId);
    if (running) {
      if (ownsBus) await bus.close();
      throw new Error(`node '${nodeId}' of cluster '${config.cluster}' is already running (pid ${running.pid}); stop it first or start this one with another --node`);
    }
  }
  let store: Store;
  try {
    store = openStore({ path: nodeDataDir(options.data ?? config.data, nodeId), ...options.store });
  } catch (err) {
    if (ownsBus) await bus.close();
    throw err;
  }

  const cleanups: (() => Promise<void>)[] = [];
  try {
    return await assemble();
  } catch (err) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await store.close().catch(() => undefined);
    if (ownsBus) await bus.close().catch(() => undefined);
    throw err;
  }

  async function assemble(): Promise<EnsoulNode> {
    // ---- the registry, from what LMDB holds ----------------------------------------------
    const initial: RegistrySoul[] = initialRegistrySouls(hostedConfigs, blueprints, store);
    const registry = createNodeRegistry({ node: nodeId, cluster: config.cluster, bus: bus.kind, souls: initial, ...(placement === "assigned" ? { elsewhere: soulsElsewhere(config, nodeId) } : {}) });
    const live = new Map<string, Soul>();
    const { dirty, activations, count, flush, markPassivated, markStopped } = createRegistryFeed(registry, live);

    // ---- gates, cognition, outlets ----------------------------------------------------------
    const gateContext = { bus, cluster: config.cluster, store, env };
    const built: BuiltGate[] = config.gates.map((spec) => buildGate(spec, gateContext));
    const cognition = nodeCognition({ config, env, ...(options.registry ? { registry: options.registry } : {}), budgetsOf: (id) => gatesOf(built, id).filter((b) => b.budget), onError: report });
    const decisions = publishDecisions(bus, config.cluster, { from: address, onError: (err, d) => report(err, `gate decision ${d.decision} of ${d.gate}`) });
    const events = createEventPublisher(bus, subjects, address, report);

    const senders = new Map<string, string>();
    const busOutlet = createBusOutlet({
      bus,
      subjects,
      runningPerception: (id) => live.get(id)?.actor.getSnapshot().context.perception?.id,
      senderOf: (perceptionId) => senders.get(perceptionId),
      onError: report,
    });
    const { outlets, approvals } = createSoulOutlets({ hostedConfigs, built, busOutlet, decisions, events, approvalsConfig: config.approvals, store });

    const { router, onSoulEvent } = createSoulRouter({ nodeId, outlets, events, changed: (soulId) => dirty.add(soulId) });

    // ---- souls -------------------------------------------------------------------------------
    const soulHost = createSoulHost({
      store,
      blueprint: (id) => {
        const bp = blueprints.get(id);
        if (!bp || !hosted.has(id)) throw new Error(`soul '${id}' is not hosted on node ${nodeId}`);
        return bp;
      },
      outlet: router,
      cognition,
      maxQueued: (id) => hosted.get(id)?.maxQueued ?? config.runtime.maxQueued,
      ...(options.inspect ? { inspect: options.inspect } : {}),
      onActivate: (soul) => {
        live.set(soul.id, soul);
        soul.onEvent(onSoulEvent);
        // Counted now, shown with the next flush: a node activating a thousand souls must not copy the registry a thousand times.
        activations.set(soul.id, (activations.get(soul.id) ?? 0) + 1);
        dirty.add(soul.id);
      },
    });
    let stopping = false;
    const soulOf = async (id: string): Promise<Soul> => {
      if (!hosted.has(id)) throw new Error(`soul '${id}' is not hosted on node ${nodeId}`);
      if (stopping) throw new Error(`node ${nodeId} is stopping`);
      return soulHost.get(id);
    };

    const flusher = setInterval(() => flush(), REGISTRY_FLUSH_MS);
    flusher.unref();
    cleanups.push(async () => clearInterval(flusher));

    // Served (and confirmed by the bus) before any soul runs a turn that may ask them.
    const skillGates = await startNodeSkillGates({ bus, config, nodeId, placement, gateContext, registry, ...(options.inspect ? { inspect: options.inspect } : {}) });
    cleanups.push(async () => void (await Promise.all(skillGates.map((g) => g.stop()))));

    // Souls with work left from the last run come back first: what was in their inbox
    // arrived before anything the consumer will deliver now.
    for (const soul of hostedConfigs) {
      const actor = store.actor(soul.id);
      if (actor.pendingInbox().length || actor.pendingOutbox().length || actor.schedules().length) await soulHost.get(soul.id);
    }
    for (const queue of approvals.values()) void queue.resume().catch((err: unknown) => report(err, "resuming approved proposals"));

    // ---- daimons ------------------------------------------------------------------------------

    const daimons: NodeDaimons = startDaimons({
      bus,
      cognition,
      daimons: config.daimons.flatMap((entry, i) =>
        hosted.has(entry.soul)
          ? [{ entry: resolveDaimon(entry), persona: loaded.personas.get(i) ?? resolveDaimon(entry).persona ?? "", soulName: (blueprints.get(entry.soul) as SoulBlueprint).name }]
          : [],
      ),
      onChange: (d) => registry.trigger.daimonSet(d),
      onError: report,
      ...(options.inspect ? { inspect: options.inspect } : {}),
    });
    cleanups.push(() => daimons.stop());

    // ---- whispers, hearing, perceptions ---------------------------------------------------------
    const whispers: Subscription = subscribeWhispers(bus, subjects, {
      hosts: (id) => hosted.has(id),
      knows: (id) => known.has(id),
      reportsUnknown,
      soul: soulOf,
      count,
      report,
    });
    cleanups.push(async () => whispers.unsubscribe());
    // Stored perceptions no consumer can deliver (a literal `>` for the soul): reported once, by this node.
    if (reportsUnknown && bus.kind === "nats") cleanups.push(watchStrayPerceptions(bus, subjects, () => count("dead")));

    const hearings = await startHearings(bus, subjects, hostedConfigs, (speaker) => (blueprints.get(speaker) as SoulBlueprint).name, {
      ackWaitMs: config.runtime.ackWaitMs,
      onHeard: () => count("heard"),
    });
    cleanups.push(async () => void (await Promise.all(hearings.map((h) => h.stop()))));

    // The JetStream consumer redelivers until acked, so a soul may hold a perception unwritten.
    const onJetStream = options.nats !== undefined && options.bus === undefined;
    const intake = createPerceptionIntake(
      {
        bus,
        hosts: (id) => hosted.has(id),
        knows: (id) => known.has(id),
        reportsUnknown,
        blueprint: (id) => blueprints.get(id) as SoulBlueprint,
        soul: soulOf,
        approvals: (id) => approvals.get(id),
        events,
        rememberSender(perceptionId, from) {
          senders.set(perceptionId, from);
          if (senders.size > SENDERS_KEPT) senders.delete(senders.keys().next().value as string);
        },
        count,
      },
      { holds: onJetStream },
    );
    const source = await startNodePerceptionSources(bus, subjects, nodeId, {
      ackWaitMs: config.runtime.ackWaitMs,
      handler: intake,
      room: (id) => live.get(id)?.room(),
      report,
      ...(options.nats && onJetStream
        ? { jetStream: { nats: options.nats, stream: streamName(config.cluster), maxInFlight: config.runtime.maxInFlight, name: `ensoul-${config.cluster}-${nodeId}-perceptions` } }
        : {}),
    });
    cleanups.push(() => source.stop());

    // ---- passivation, control ------------------------------------------------------------------
    const { passivateAfterMs } = config.runtime;
    const passivator =
      passivateAfterMs > 0
        ? setInterval(() => {
            soulHost
              .passivateIdle(passivateAfterMs)
              .then(markPassivated)
              .catch((err: unknown) => report(err, "passivating idle souls"));
          }, Math.min(30_000, Math.max(50, Math.floor(passivateAfterMs / 2))))
        : undefined;
    passivator?.unref();

    const memory = soulMemoryReader({ nodeId, hosted, known, store, live, blueprints });
    const status = (): NodeStatus => {
      flush(true);
      return registryStatus(registry.getSnapshot().context);
    };
    const setDaimonMode = (soulId: string, mode: string, name?: string) => daimons.setMode(soulId, mode, name);

    let resolveStopped!: () => void;
    const stopped = new Promise<void>((r) => (resolveStopped = r));
    let stopping$: Promise<void> | undefined;

    const control: NodeControl = startNodeControl(
      bus,
      subjects,
      nodeId,
      config.runtime.heartbeatMs,
      {
        status,
        memory,
        daimon: (req) => ({ soulId: req.soulId, daimons: setDaimonMode(req.soulId, req.mode, req.name) }),
        stop: () => void node.stop().catch(() => undefined), // each failed step is reported as it fails
      },
      report,
    );
    registry.trigger.stateChanged({ state: "running" });
    control.beat();

    const stop = (): Promise<void> => {
      stopping = true;
      if (passivator) clearInterval(passivator);
      return runShutdown(nodeId, report, [
        ["announcing the stop", () => (registry.trigger.stateChanged({ state: "stopping" }), control.beat())],
        ["stopping the perception consumer", () => source.stop()],
        ["stopping the hearings", () => stopEach(hearings, (h) => h.stop(), (h) => `hearing ${h.name}`)],
        ["stopping the whispers", () => (whispers.unsubscribe(), whispers.closed)],
        ["stopping daimons", () => daimons.stop()],
        ["stopping the souls", () => stopEach(live.values(), (s) => s.stop(), (s) => `soul ${s.id}`)],
        ["closing the soul host", () => (flush(true), soulHost.close())],
        ["publishing what was said", () => busOutlet.settled()],
        ["publishing gate decisions", () => decisions.flush()],
        ["stopping skill gates", () => stopEach(skillGates, (g) => g.stop(), (g) => `skill gate ${g.skill}`)],
        ["marking the souls stopped", () => (clearInterval(flusher), markStopped(hosted.keys()), control.beat())],
        ["stopping node control", () => control.stop()],
        ["draining the bus", () => ownsBus && bus.drain()],
        ["closing the store", () => store.close()],
      ]);
    };

    const node: EnsoulNode = {
      id: nodeId,
      cluster: config.cluster,
      bus,
      subjects,
      store,
      registry,
      souls: [...hosted.keys()],
      soul: soulOf,
      status,
      memory,
      setDaimonMode,
      async idle() {
        for (;;) {
          await Promise.all([...live.values()].map((s) => s.idle()));
          await busOutlet.settled();
          if ([...live.values()].every((s) => !s.state().running && s.state().pending === 0)) return;
        }
      },
      stop() {
        stopping$ ??= stop().finally(resolveStopped);
        return stopping$;
      },
      stopped,
    };
    return node;
  }
}
