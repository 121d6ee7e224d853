/**
 * What a node tells its registry about its souls: their state as LMDB holds it at start, then
 * the live souls' state and the node's counters, batched (the node flushes them on a timer,
 * and in full for a status reply).
 *
 * It is the step of a node's start that makes its registry (`startRegistryStep`). The feed
 * exists apart from the rest because the batching is its own concern: a node
 * activating a thousand souls, or taking in a thousand perceptions, must not copy the registry
 * a thousand times.
 */
import type { Soul, SoulBlueprint } from "../../actors/soul/index.ts";
import type { Store } from "../store/index.ts";
import type { SoulConfig } from "./clusterConfig.ts";
import type { NodeCounters, SoulRunStatus, TokenCount } from "./controlProtocol.ts";
import { createNodeRegistry, type NodeRegistry, type RegistrySoul, type SoulPatch } from "./nodeRegistry.ts";
import type { NodePlan } from "./nodePlan.ts";
import { soulsElsewhere } from "./soulPlacement.ts";

/** The hosted souls as LMDB holds them: passivated (or expired) until they are activated. */
export function initialRegistrySouls(hostedConfigs: readonly SoulConfig[], blueprints: ReadonlyMap<string, SoulBlueprint>, store: Store): RegistrySoul[] {
  return hostedConfigs.map((s) => {
    const bp = blueprints.get(s.id) as SoulBlueprint;
    // The header only: a node with a thousand long conversations must not read them all to start.
    const state = store.actor(s.id).loadStateHeader();
    return {
      id: s.id,
      name: bp.name,
      process: state?.currentProcess ?? bp.initialProcess,
      turns: state?.turn ?? 0,
      pending: 0,
      status: state?.metadata?.["expired"] === true ? "expired" : "passivated",
      activations: 0,
      lastTurnAt: 0,
    };
  });
}

/**
 * Batches registry updates: souls marked `dirty` (and their `activations`) and `count`ed
 * counters are patched in on `flush`; `markPassivated` patches at once the souls just passivated,
 * `markStopped` the node and all its souls once it has stopped.
 */
export function createRegistryFeed(registry: NodeRegistry, live: Map<string, Soul>) {
  const counts: Partial<NodeCounters> = {};
  const rates = new TurnRates();
  const tokens = new Map<string, TokenCount>();
  /** Model tokens a soul spent: shown with its status at the next flush. */
  const spent = (soulId: string, input: number, output: number) => {
    const total = tokens.get(soulId) ?? { input: 0, output: 0 };
    total.input += input;
    total.output += output;
    tokens.set(soulId, total);
    dirty.add(soulId);
  };
  const dirty = new Set<string>();
  const activations = new Map<string, number>();
  const count = (counter: keyof NodeCounters, by = 1) => {
    counts[counter] = (counts[counter] ?? 0) + by;
  };
  const statusOfLive = (soul: Soul): SoulPatch => {
    const s = soul.state();
    const status: SoulRunStatus = s.status === "active" || s.status === "stopping" ? (s.running ? "running" : "active") : s.status;
    return { process: s.process, turns: s.turn, pending: s.pending, status };
  };
  const flush = (all = false) => {
    const patches: Record<string, SoulPatch> = {};
    // A set: a soul both live and dirty would otherwise count its new turns twice.
    const ids = all ? new Set([...live.keys(), ...dirty]) : [...dirty];
    dirty.clear();
    const known = registry.getSnapshot().context.souls;
    const now = Date.now();
    for (const id of ids) {
      const soul = live.get(id);
      const entry = known.get(id);
      if (!soul || !entry) continue;
      const patch: SoulPatch = statusOfLive(soul);
      if (entry.turns !== patch.turns) {
        patch.lastTurnAt = now;
        rates.add(id, Math.max(1, (patch.turns ?? 0) - entry.turns), now);
      }
      patch.turnsPerMinute = rates.perMinute(id, now);
      const used = tokens.get(id);
      if (used) patch.tokens = { ...used };
      const activated = activations.get(id);
      if (activated !== undefined) patch.activations = entry.activations + activated;
      // A soul whose entry would not change keeps it: a full flush (every heartbeat) patches only what moved.
      if (changes(entry, patch)) patches[id] = patch;
    }
    activations.clear();
    if (Object.keys(patches).length) registry.trigger.soulsPatched({ patches });
    if (Object.keys(counts).length) {
      registry.trigger.counted({ delta: { ...counts } });
      for (const k of Object.keys(counts) as (keyof NodeCounters)[]) delete counts[k];
    }
  };
  const markPassivated = (ids: readonly string[]) => {
    const patches: Record<string, SoulPatch> = {};
    for (const id of ids) {
      const soul = live.get(id);
      if (soul) patches[id] = { ...statusOfLive(soul), status: soul.state().status === "expired" ? "expired" : "passivated", pending: 0 };
      live.delete(id);
    }
    if (Object.keys(patches).length) registry.trigger.soulsPatched({ patches });
  };
  const markStopped = (hosted: Iterable<string>) => {
    const patches: Record<string, SoulPatch> = {};
    const known = registry.getSnapshot().context.souls;
    for (const id of hosted) patches[id] = { status: known.get(id)?.status === "expired" ? "expired" : "stopped", pending: 0 };
    registry.trigger.soulsPatched({ patches });
    registry.trigger.stateChanged({ state: "stopped" });
  };
  return { dirty, activations, count, spent, flush, markPassivated, markStopped };
}

/** The patch would change the entry. */
function changes(entry: RegistrySoul, patch: SoulPatch): boolean {
  for (const [key, value] of Object.entries(patch) as [keyof SoulPatch, unknown][]) {
    const current = entry[key];
    if (key === "tokens") {
      const [a, b] = [current as TokenCount | undefined, value as TokenCount];
      if (a?.input !== b.input || a.output !== b.output) return true;
    } else if (current !== value) return true;
  }
  return false;
}

/** Each soul's turns of the last minute, as timestamps: a few hundred at most for a busy soul. */
class TurnRates {
  readonly #times = new Map<string, number[]>();

  add(soulId: string, turns: number, now: number): void {
    const times = this.#times.get(soulId) ?? [];
    for (let i = 0; i < Math.min(turns, 10_000); i++) times.push(now);
    this.#times.set(soulId, times);
  }

  perMinute(soulId: string, now: number): number {
    const times = this.#times.get(soulId);
    if (!times) return 0;
    const since = now - 60_000;
    let drop = 0;
    while (drop < times.length && (times[drop] as number) < since) drop++;
    if (drop) times.splice(0, drop);
    return times.length;
  }
}

const REGISTRY_FLUSH_MS = 100;

export type RegistryFeed = ReturnType<typeof createRegistryFeed>;

export interface NodeRegistryStep extends RegistryFeed {
  readonly registry: NodeRegistry;
  /** The souls in memory now, by id (the soul host adds them as it activates them). */
  readonly live: Map<string, Soul>;
  /** Stops the flush timer (the shutdown flushes once more itself). */
  stopFlushing(): void;
}

/** The node's registry, filled from what LMDB holds, and its feed flushed on a timer. */
export function startRegistryStep(plan: NodePlan, store: Store, busKind: string): NodeRegistryStep {
  const { nodeId, config, placement, hostedConfigs, blueprints } = plan;
  const registry = createNodeRegistry({
    node: nodeId,
    cluster: config.cluster,
    bus: busKind,
    souls: initialRegistrySouls(hostedConfigs, blueprints, store),
    ...(placement === "assigned" ? { elsewhere: soulsElsewhere(config, nodeId) } : {}),
  });
  const live = new Map<string, Soul>();
  const feed = createRegistryFeed(registry, live);
  const flusher = setInterval(() => feed.flush(), REGISTRY_FLUSH_MS);
  flusher.unref();
  return { ...feed, registry, live, stopFlushing: () => clearInterval(flusher) };
}
