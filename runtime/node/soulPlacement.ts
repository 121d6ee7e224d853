/**
 * Where a configured soul runs: the first node, every node the config names, the node of a
 * soul, the souls one node hosts, and whether a node serves a skill gate.
 *
 * It exists apart from the config's schema because placement is read by a running node (which
 * souls and skills it takes on), not checked once at load time.
 */
import { DEFAULT_LEASE_MS, type ClusterConfig, type SkillGateConfig, type SoulConfig } from "./clusterConfig.ts";

export type Placement = "all" | "assigned";

/** The node that hosts unassigned souls and dead-letters perceptions for souls no node hosts. */
export function firstNode(config: ClusterConfig, fallback = "local"): string {
  return config.nodes?.[0] ?? config.souls.find((s) => s.node !== undefined)?.node ?? fallback;
}

/** Every node the config names, first node first. */
export function configNodes(config: ClusterConfig): string[] {
  const out = [...(config.nodes ?? [])];
  for (const soul of config.souls) if (soul.node !== undefined && !out.includes(soul.node)) out.push(soul.node);
  return out;
}

/**
 * The node a soul runs on when souls are spread over nodes. A config that names no node at
 * all has one node, whatever it is called: `fallback`.
 */
export function nodeOf(config: ClusterConfig, soul: SoulConfig, fallback = "local"): string {
  return soul.node ?? firstNode(config, fallback);
}

/**
 * The souls the config places on other nodes, by node. A node's heartbeat carries them, so
 * a client can tell a soul whose node is down from a soul the cluster does not have.
 */
export function soulsElsewhere(config: ClusterConfig, nodeId: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const soul of config.souls) {
    if (config.placement === "auto" && soul.node === undefined) continue; // no fixed place
    const node = nodeOf(config, soul, nodeId);
    if (node !== nodeId) (out[node] ??= []).push(soul.id);
  }
  return out;
}

/**
 * The souls one node hosts: all of them in a single-process run, else those the config
 * assigns to it (unassigned souls go to the first node; with no node named anywhere, to
 * this one).
 */
export function soulsFor(config: ClusterConfig, nodeId: string, placement: Placement): SoulConfig[] {
  if (placement === "all") return [...config.souls];
  // Automatic placement: any unpinned soul may come here (which ones do, the live nodes decide: soulOwnership.ts).
  if (config.placement === "auto") return config.souls.filter((s) => s.node === undefined || s.node === nodeId);
  return config.souls.filter((s) => nodeOf(config, s, nodeId) === nodeId);
}

/** Whether a node serves a skill gate: listed, or every node when none is listed. */
export function servesSkill(gate: SkillGateConfig, nodeId: string, placement: Placement): boolean {
  if (placement === "all" || gate.node === undefined) return true;
  return Array.isArray(gate.node) ? gate.node.includes(nodeId) : gate.node === nodeId;
}

/** Failover's settings: the config's, and on whenever placement is automatic (a soul moves with its history). */
export function failoverOf(config: ClusterConfig): false | { leaseMs: number } {
  if (config.runtime.failover) return config.runtime.failover;
  return config.placement === "auto" ? { leaseMs: DEFAULT_LEASE_MS } : false;
}
