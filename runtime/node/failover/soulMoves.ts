/**
 * Souls moving between nodes under `placement: auto`. When the live nodes change, this node
 * lets go of the souls that map elsewhere now (each stops after its running turn, its lease is
 * released, and the new node opens it from its history), and opens the souls it gained: each
 * brought up to its history, its missed perceptions recorded, and activated if it has any to
 * answer. Opening a soul whose old node still holds its lease fails with LeaseHeldError; the
 * soul is then opened at its next perception (which comes back until then), or at the next change.
 */
import { LeaseHeldError } from "../../bus/index.ts";
import type { SoulHost } from "../../../actors/soul/index.ts";
import type { Store } from "../../store/index.ts";
import type { NodeFailover } from "./nodeFailover.ts";
import type { OwnershipChange, SoulOwnership } from "./soulOwnership.ts";

export interface SoulMovesOptions {
  nodeId: string;
  ownership: SoulOwnership;
  failover: NodeFailover;
  host: SoulHost;
  store: Store;
  log: (line: string) => void;
  report: (err: unknown, what: string) => void;
}

export function followOwnership(o: SoulMovesOptions, candidates: readonly string[]): void {
  o.log(`node ${o.nodeId}: live nodes ${o.ownership.live().join(", ")}: runs ${candidates.filter((id) => o.ownership.owns(id)).length} of ${candidates.length} souls`);
  o.ownership.onChange(async (change: OwnershipChange) => {
    o.log(`node ${o.nodeId}: live nodes ${change.live.join(", ")}: ${change.gained.length} soul(s) come here, ${change.lost.length} move away`);
    await Promise.all(
      change.lost.map(async (id) => {
        try {
          await o.host.passivate(id);
          await o.failover.releaseSoul(id);
        } catch (err) {
          o.report(err, `letting soul ${id} move away`);
        }
      }),
    );
    await openSouls(o.failover, change.gained, o.log);
    for (const id of change.gained) {
      if (o.ownership.owns(id) && o.store.actor(id).pendingInbox().length > 0) void o.host.get(id).catch((err: unknown) => o.report(err, `activating soul ${id}`));
    }
  });
}

/** Opens souls for failover, a few at a time; a soul another live node still owns is left to it (and tried again at activation). */
export async function openSouls(failover: NodeFailover, ids: readonly string[], log: (line: string) => void): Promise<void> {
  const queue = [...ids];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      try {
        await failover.prepare(id);
      } catch (err) {
        if (!(err instanceof LeaseHeldError)) throw err;
        log(`soul ${id} is still owned by node ${err.holder}, whose lease is live: it comes here at its next perception`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, queue.length) }, worker));
}
