import { discoverNodes, nodeSouls } from "../node/index.ts";
import type { Bus } from "../bus/index.ts";
import type { NodeStatus } from "../node/index.ts";
import { CliError } from "./CliError.ts";
import { print, withBus, type ClusterTarget } from "./clusterTarget.ts";

function ago(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** `ensoul status`: every node of the cluster, found by heartbeat, with its souls. */
export async function statusCommand(target: ClusterTarget & { waitMs: number; json?: boolean }): Promise<NodeStatus[]> {
  return withBus(target, "status", async (bus) => {
    const nodes = await discoverNodes(bus, { waitMs: target.waitMs });
    if (nodes.size === 0) throw new CliError(`no node of cluster '${target.cluster}' is running (no heartbeat within ${target.waitMs} ms)`, 1);
    const heard = [...nodes.values()].map((n) => n.status).sort((a, b) => a.node.localeCompare(b.node));
    const statuses = await Promise.all(heard.map((s) => withEverySoul(bus, s)));
    if (target.json) {
      print(target, JSON.stringify(statuses, null, 2));
      return statuses;
    }
    print(target, `cluster ${target.cluster}: ${statuses.length} node${statuses.length === 1 ? "" : "s"}`);
    for (const s of statuses) {
      const turns = s.souls.reduce((n, x) => n + x.turns, 0);
      const count = s.soulCount ?? s.souls.length;
      print(target, `node ${s.node}  pid ${s.pid}  ${s.state}  up ${ago(Date.now() - s.startedAt)}  ${count} souls  ${turns} turns${s.soulsPartial ? " (of the souls shown)" : ""}  ${s.counters.dead} dead`);
      const width = Math.max(4, ...s.souls.map((x) => x.id.length));
      for (const soul of s.souls) {
        // Under automatic placement, why the soul runs on this node.
        print(target, `  ${soul.id.padEnd(width)}  ${soul.process}  turns ${soul.turns}  pending ${soul.pending}  ${soul.status}${soul.placement ? `  (${soul.placement})` : ""}`);
      }
      if (s.soulsPartial) print(target, `  … ${count - s.souls.length} more souls not shown: the node did not answer the listing (ensoul status --json lists what was heard)`);
      for (const d of s.daimons) print(target, `  daimon ${d.name} of ${d.soul}: ${d.mode}`);
      if (s.skillGates.length) print(target, `  serves skill gates: ${s.skillGates.join(", ")}`);
      for (const b of s.bridges ?? []) {
        const c = b.counters;
        print(target, `  bridge ${b.name} (${b.type} → ${b.soul}): ${b.state}  ${c["perceptions"] ?? 0} perceptions  ${c["duplicates"] ?? 0} duplicates  ${c["ignored"] ?? 0} ignored  ${c["posted"] ?? 0} posted${b.lastError ? `  last error: ${b.lastError}` : ""}`);
      }
    }
    return statuses;
  });
}

/**
 * The node's status with every soul: a heartbeat that could not list them all is completed
 * by paging the node's `status`; if the node does not answer, the status stays partial.
 */
async function withEverySoul(bus: Bus, status: NodeStatus): Promise<NodeStatus> {
  if (!status.soulsPartial) return status;
  const souls = await nodeSouls(bus, status).catch(() => undefined);
  if (!souls) return status;
  const { soulsPartial: _, ...rest } = status;
  return { ...rest, souls, soulCount: souls.length };
}
