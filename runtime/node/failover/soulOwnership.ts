/**
 * Which node a soul runs on under `placement: auto`: rendezvous (highest-random-weight)
 * hashing over the live nodes, those whose liveness leases are held (leases.ts). Every node
 * computes the same answer from the same live set, a soul moves only when the node it maps to
 * comes or goes, and a node that joins takes about 1/n of the souls, from every other node
 * alike. Souls pinned with `node:` stay where they are pinned.
 *
 * The live set is read from the lease bucket every third of the lease time; a change calls the
 * listeners with the souls this node gained and lost (nodeRebalance.ts moves them).
 */
import { createHash } from "node:crypto";
import type { LeaseStore } from "../../bus/index.ts";
import type { SoulConfig } from "../clusterConfig.ts";

export interface OwnershipChange {
  live: readonly string[];
  gained: string[];
  lost: string[];
}

export interface SoulOwnership {
  /** This node runs the soul now. */
  owns(soulId: string): boolean;
  /** The node the soul maps to now (undefined: no live node), and why. */
  placeOf(soulId: string): { node: string | undefined; why: string };
  live(): readonly string[];
  onChange(listener: (change: OwnershipChange) => void | Promise<void>): void;
  /** Reads the live set now (and tells the listeners of a change). */
  refresh(): Promise<void>;
  stop(): void;
}

/**
 * The weight of a (soul, node) pair: 48 bits of its MD5. Not for secrecy: a hash every
 * process and version computes alike, whose bits do not follow the names (FNV gave eight
 * souls named s0..s7 all to one of two nodes).
 */
function weight(soulId: string, node: string): number {
  return createHash("md5").update(soulId).update("\u0000").update(node).digest().readUIntBE(0, 6);
}

/** The live node a soul maps to: the one with the highest weight for the pair, ties by name. */
export function rendezvousNode(soulId: string, live: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const node of live) {
    const w = weight(soulId, node);
    if (w > bestWeight || (w === bestWeight && best !== undefined && node < best)) {
      best = node;
      bestWeight = w;
    }
  }
  return best;
}

export interface OwnershipOptions {
  nodeId: string;
  /** The souls this node may run: pinned here, or unpinned. */
  souls: readonly SoulConfig[];
  leases: LeaseStore;
  pollMs: number;
  report: (err: unknown, what: string) => void;
}

export async function startSoulOwnership(o: OwnershipOptions): Promise<SoulOwnership> {
  const pinned = new Map(o.souls.filter((s) => s.node !== undefined).map((s) => [s.id, s.node as string]));
  const candidates = o.souls.map((s) => s.id);
  let live: string[] = [];
  let owned = new Set<string>();
  const listeners: ((change: OwnershipChange) => void | Promise<void>)[] = [];

  const placeOf = (soulId: string) => {
    const pin = pinned.get(soulId);
    if (pin !== undefined) return { node: pin, why: `pinned to node ${pin} by the config` };
    const node = rendezvousNode(soulId, live);
    return { node, why: node === undefined ? "no live node" : `placement: auto, rendezvous over ${live.length} live node${live.length === 1 ? "" : "s"} (${live.join(", ")})` };
  };
  const ownedBy = (nodes: string[]) => new Set(candidates.filter((id) => (pinned.get(id) ?? rendezvousNode(id, nodes)) === o.nodeId));

  // The listeners move souls, one change after another. Reading the live set never waits for
  // them, and a move that has not finished in a while is reported and the next change goes on
  // (it keeps running meanwhile): one stuck soul must not stop a node from seeing its peers.
  let moving: Promise<void> = Promise.resolve();
  const tell = (change: OwnershipChange) => {
    moving = moving.then(() =>
      withTimeout(
        Promise.all(listeners.map((listener) => listener(change))).then(() => undefined),
        Math.max(10_000, o.pollMs * 10),
        "moving souls after a change of the live nodes",
      ).catch((err: unknown) => o.report(err, "moving souls")),
    );
  };

  let refreshing: Promise<void> | undefined;
  const refresh = (): Promise<void> =>
    (refreshing ??= (async () => {
      try {
        // Bounded: a read that never answers must not stop every later one (they share this promise).
        const now = await withTimeout(o.leases.liveNodes(), Math.max(5_000, o.pollMs * 5), "reading the live nodes");
        // This node counts as live while it runs, even before its own lease shows in a read.
        if (!now.includes(o.nodeId)) now.push(o.nodeId), now.sort();
        if (now.join(",") === live.join(",")) return;
        live = now;
        const next = ownedBy(now);
        const change: OwnershipChange = { live: now, gained: [...next].filter((id) => !owned.has(id)), lost: [...owned].filter((id) => !next.has(id)) };
        owned = next;
        tell(change);
      } finally {
        refreshing = undefined;
      }
    })());

  await refresh();
  // Polling starts with the first listener: a change read before anyone listens would be lost.
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  return {
    owns: (id) => owned.has(id),
    placeOf,
    live: () => live,
    onChange(listener) {
      listeners.push(listener);
      if (timer || stopped) return;
      timer = setInterval(() => void refresh().catch((err: unknown) => o.report(err, "reading the live nodes")), o.pollMs);
      timer.unref?.();
    },
    refresh,
    stop: () => ((stopped = true), clearInterval(timer)),
  };
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
