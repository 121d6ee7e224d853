/**
 * Souls moving between nodes under `placement: auto`. When the live nodes change, this node
 * lets go of the souls that map elsewhere now (each stops after its running turn, its lease is
 * released, and the new node opens it from its history), and opens the souls it gained: each
 * brought up to its history, its missed perceptions recorded, and activated if it has any to
 * answer. Opening a soul whose old node still holds its lease fails with LeaseHeldError, and
 * an opening can fail for other reasons (its history kept changing while it was read): the soul
 * is then opened again shortly, or at its next perception (which comes back until then).
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

export function followOwnership(o: SoulMovesOptions, candidates: readonly string[], retryMs: number): { stop(): void } {
  o.log(`node ${o.nodeId}: live nodes ${o.ownership.live().join(", ")}: runs ${candidates.filter((id) => o.ownership.owns(id)).length} of ${candidates.length} souls`);
  // Souls this node gained whose old node has not let go yet: opened again until it has, so
  // what they missed is answered even if nobody writes to them again.
  const waiting = new Set<string>(candidates.filter((id) => o.ownership.owns(id)));
  // Said once per soul and holder, not at every try.
  const said = new Set<string>();
  const logOnce = (line: string) => void (said.has(line) || (said.add(line), o.log(line)));
  const openWaiting = async () => {
    const ids = [...waiting].filter((id) => o.ownership.owns(id));
    waiting.clear();
    for (const id of await openSouls(o.failover, ids, logOnce)) waiting.add(id);
    for (const id of ids) {
      if (!waiting.has(id) && o.ownership.owns(id) && o.store.actor(id).pendingInbox().length > 0) void o.host.get(id).catch((err: unknown) => o.report(err, `activating soul ${id}`));
    }
  };
  // A soul this node still holds but no longer runs (an opening that finished after the soul
  // moved on): let go, or its new node would wait for it forever.
  const letGoStrays = async () => {
    const strays = o.failover.openedSouls().filter((id) => !o.ownership.owns(id));
    await Promise.all(strays.map((id) => letGo(id)));
  };
  const letGo = async (id: string) => {
    try {
      await o.host.passivate(id);
      await o.failover.releaseSoul(id);
    } catch (err) {
      o.report(err, `letting soul ${id} move away`);
    }
  };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    letGoStrays()
      .then(() => (waiting.size > 0 ? openWaiting() : undefined))
      .catch((err: unknown) => o.report(err, "opening the souls that moved here"))
      .finally(() => (busy = false));
  }, retryMs);
  timer.unref?.();
  o.ownership.onChange(async (change: OwnershipChange) => {
    o.log(`node ${o.nodeId}: live nodes ${change.live.join(", ")}: ${change.gained.length} soul(s) come here, ${change.lost.length} move away`);
    await Promise.all(change.lost.map(letGo));
    for (const id of change.gained) waiting.add(id);
    await openWaiting();
  });
  return { stop: () => clearInterval(timer) };
}

/**
 * Opens souls for failover, a few at a time. Resolves with those not opened now, to be tried
 * again: another live node still owns them, or their opening failed (their history kept
 * changing under the read, NATS away). One soul's failed opening never fails the others.
 */
export async function openSouls(failover: NodeFailover, ids: readonly string[], log: (line: string) => void): Promise<string[]> {
  const queue = [...ids];
  const again: string[] = [];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      try {
        await failover.prepare(id);
      } catch (err) {
        again.push(id);
        if (err instanceof LeaseHeldError) log(`soul ${id} is still owned by node ${err.holder}, whose lease is live: it comes here once that node lets go`);
        else log(`soul ${id} was not opened here (${err instanceof Error ? err.message : String(err)}): tried again shortly`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, queue.length) }, worker));
  return again;
}
