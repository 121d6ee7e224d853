/**
 * The node's registry of its actors: which souls it hosts (with their process, turns and
 * whether they are live), which daimons run beside them and in which mode, which skill
 * gates it serves, and a few counters. Plain reactive state, so an @xstate/store (as
 * DESIGN.md asks): the live status view, the heartbeat and the `status` request all read
 * this one snapshot, and it can be inspected like the machines.
 *
 * Turn counts change thousands of times a second on a busy node; the node batches them
 * (`soulsPatched` with many souls at once) instead of triggering once per turn.
 */
import { createStore } from "@xstate/store";
import type { BridgeStatusEntry, DaimonStatusEntry, NodeCounters, NodeStatus, SoulStatusEntry } from "./controlProtocol.ts";

export interface RegistrySoul extends SoulStatusEntry {
  /** How often the soul was brought into memory since the node started. */
  activations: number;
  /** Epoch ms of its last committed turn, or 0. */
  lastTurnAt: number;
}

export interface RegistryContext {
  node: string;
  cluster: string;
  bus: string;
  pid: number;
  startedAt: number;
  state: NodeStatus["state"];
  souls: Record<string, RegistrySoul>;
  /** Keyed by `${soul}/${name}`. */
  daimons: Record<string, DaimonStatusEntry>;
  skillGates: Record<string, { skill: string; serving: boolean }>;
  /** By bridge name. */
  bridges: Record<string, BridgeStatusEntry>;
  counters: NodeCounters;
  /** NodeStatus.elsewhere: fixed by the config. */
  elsewhere?: Record<string, string[]>;
}

export type SoulPatch = Partial<Omit<RegistrySoul, "id">>;

export function createNodeRegistry(init: { node: string; cluster: string; bus: string; souls: RegistrySoul[]; elsewhere?: Record<string, string[]> }) {
  return createStore({
    context: {
      node: init.node,
      cluster: init.cluster,
      bus: init.bus,
      pid: process.pid,
      startedAt: Date.now(),
      state: "starting",
      souls: Object.fromEntries(init.souls.map((s) => [s.id, s])),
      daimons: {},
      skillGates: {},
      bridges: {},
      counters: { perceptions: 0, duplicates: 0, dead: 0, whispers: 0, heard: 0 },
      ...(init.elsewhere ? { elsewhere: init.elsewhere } : {}),
    } as RegistryContext,
    on: {
      stateChanged: (ctx, e: { state: NodeStatus["state"] }) => ({ ...ctx, state: e.state }),
      soulsPatched: (ctx, e: { patches: Record<string, SoulPatch> }) => {
        const souls = { ...ctx.souls };
        for (const [id, patch] of Object.entries(e.patches)) {
          const current = souls[id];
          if (current) souls[id] = { ...current, ...patch };
        }
        return { ...ctx, souls };
      },
      daimonSet: (ctx, e: DaimonStatusEntry) => ({ ...ctx, daimons: { ...ctx.daimons, [`${e.soul}/${e.name}`]: { soul: e.soul, name: e.name, mode: e.mode } } }),
      daimonRemoved: (ctx, e: { soul: string; name: string }) => {
        const daimons = { ...ctx.daimons };
        delete daimons[`${e.soul}/${e.name}`];
        return { ...ctx, daimons };
      },
      skillGateSet: (ctx, e: { skill: string; serving: boolean }) => ({ ...ctx, skillGates: { ...ctx.skillGates, [e.skill]: { skill: e.skill, serving: e.serving } } }),
      // Wrapped: a store event's own `type` would overwrite the bridge's.
      bridgeSet: (ctx, e: { bridge: BridgeStatusEntry }) => ({ ...ctx, bridges: { ...ctx.bridges, [e.bridge.name]: e.bridge } }),
      counted: (ctx, e: { delta: Partial<NodeCounters> }) => {
        const counters = { ...ctx.counters };
        for (const [k, v] of Object.entries(e.delta) as [keyof NodeCounters, number][]) counters[k] += v;
        return { ...ctx, counters };
      },
    },
  });
}

export type NodeRegistry = ReturnType<typeof createNodeRegistry>;

/** The registry as the control protocol reports it. */
export function registryStatus(ctx: RegistryContext): NodeStatus {
  return {
    node: ctx.node,
    cluster: ctx.cluster,
    pid: ctx.pid,
    startedAt: ctx.startedAt,
    state: ctx.state,
    bus: ctx.bus,
    souls: Object.values(ctx.souls).map(({ id, name, process, turns, pending, status, lastTurnAt, turnsPerMinute, tokens }) => ({
      id,
      name,
      process,
      turns,
      pending,
      status,
      ...(lastTurnAt > 0 ? { lastTurnAt } : {}),
      ...(turnsPerMinute !== undefined ? { turnsPerMinute } : {}),
      ...(tokens !== undefined ? { tokens: { ...tokens } } : {}),
    })),
    daimons: Object.values(ctx.daimons).map((d) => ({ ...d })),
    skillGates: Object.values(ctx.skillGates)
      .filter((g) => g.serving)
      .map((g) => g.skill),
    bridges: Object.values(ctx.bridges).map((b) => ({ ...b, counters: { ...b.counters } })),
    counters: { ...ctx.counters },
    ...(ctx.elsewhere ? { elsewhere: ctx.elsewhere } : {}),
  };
}
