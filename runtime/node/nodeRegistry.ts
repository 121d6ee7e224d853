/**
 * The node's registry of its actors: which souls it hosts (with their process, turns and
 * whether they are live), which daimons run beside them and in which mode, which skill
 * gates it serves, and a few counters. Plain reactive state, so an @xstate/store (as
 * DESIGN.md asks): the live status view, the heartbeat and the `status` request all read
 * this one snapshot, and it can be inspected like the machines.
 *
 * Turn counts change thousands of times a second on a busy node; the node batches them
 * (`soulsPatched` with many souls at once) instead of triggering once per turn.
 *
 * The souls are a Map that `soulsPatched` updates in place, not a record copied per patch: a
 * node hosting 100,000 souls flushes ten times a second, and copying every soul's entry at
 * each flush was most of its CPU. So a flush costs what it patches. What stays immutable is
 * each entry: a patched soul gets a new entry object, so an entry once read never changes (a
 * cache may key on it), and `soulsVersion` rises with every patch, as the map itself stays the
 * same object (a selector or a cache compares the version, not `souls`).
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
  /** Every hosted soul, by id, in the config's order. Updated in place: see the file comment. */
  souls: ReadonlyMap<string, RegistrySoul>;
  /** Rises with every `soulsPatched`. */
  soulsVersion: number;
  /** The ids the latest `soulsPatched` changed (with `soulsVersion`, what a subscriber needs to redraw only those). */
  soulsChanged: readonly string[];
  /** The souls in memory now (status `active` or `running`), in the order they became so: a heartbeat that cannot list every soul lists these first. */
  liveSouls: ReadonlySet<string>;
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
      souls: new Map(init.souls.map((s) => [s.id, s])),
      soulsVersion: 0,
      soulsChanged: [],
      liveSouls: new Set(init.souls.filter(isLive).map((s) => s.id)),
      daimons: {},
      skillGates: {},
      bridges: {},
      counters: { perceptions: 0, duplicates: 0, dead: 0, whispers: 0, heard: 0 },
      ...(init.elsewhere ? { elsewhere: init.elsewhere } : {}),
    } as RegistryContext,
    on: {
      stateChanged: (ctx, e: { state: NodeStatus["state"] }) => ({ ...ctx, state: e.state }),
      soulsPatched: (ctx, e: { patches: Record<string, SoulPatch> }) => {
        // In place (the file comment says why); the context's other fields are few.
        const souls = ctx.souls as Map<string, RegistrySoul>;
        const live = ctx.liveSouls as Set<string>;
        const changed: string[] = [];
        for (const [id, patch] of Object.entries(e.patches)) {
          const current = souls.get(id);
          if (!current) continue;
          const next = { ...current, ...patch };
          souls.set(id, next);
          changed.push(id);
          if (isLive(next)) live.add(id);
          else live.delete(id);
        }
        return { ...ctx, soulsVersion: ctx.soulsVersion + 1, soulsChanged: changed };
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

const isLive = (s: RegistrySoul) => s.status === "active" || s.status === "running";

/** A soul's entry as the control protocol reports it. */
export function soulStatusEntry({ id, name, process, turns, pending, status, lastTurnAt, turnsPerMinute, tokens }: RegistrySoul): SoulStatusEntry {
  return {
    id,
    name,
    process,
    turns,
    pending,
    status,
    ...(lastTurnAt > 0 ? { lastTurnAt } : {}),
    ...(turnsPerMinute !== undefined ? { turnsPerMinute } : {}),
    ...(tokens !== undefined ? { tokens: { ...tokens } } : {}),
  };
}

/**
 * The registry as the control protocol reports it, with every soul (or those `souls` gives).
 * In-process only: heartbeats and status replies are built by nodeStatusReply.ts, which keeps
 * them under one message.
 */
export function registryStatus(ctx: RegistryContext, souls: Iterable<RegistrySoul> = ctx.souls.values()): NodeStatus {
  return { ...registryStatusHead(ctx), souls: Array.from(souls, soulStatusEntry) };
}

/** Every field of the NodeStatus but `souls`. */
export function registryStatusHead(ctx: RegistryContext): Omit<NodeStatus, "souls"> {
  return {
    node: ctx.node,
    cluster: ctx.cluster,
    pid: ctx.pid,
    startedAt: ctx.startedAt,
    state: ctx.state,
    bus: ctx.bus,
    daimons: Object.values(ctx.daimons).map((d) => ({ ...d })),
    skillGates: Object.values(ctx.skillGates)
      .filter((g) => g.serving)
      .map((g) => g.skill),
    bridges: Object.values(ctx.bridges).map((b) => ({ ...b, counters: { ...b.counters } })),
    counters: { ...ctx.counters },
    ...(ctx.elsewhere ? { elsewhere: ctx.elsewhere } : {}),
  };
}
