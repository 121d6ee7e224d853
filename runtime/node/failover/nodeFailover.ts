/**
 * A node's part in failover (`runtime.failover`): it holds its liveness lease for as long as
 * it runs, opens each soul it activates through the soul's lease and replicated history
 * (openReplicatedSoul.ts), and gives the soul a store that replicates every turn. A soul owned
 * by another live node is not activated here (LeaseHeldError: the perception comes back
 * later). Losing the node's lease, or a fenced append of a soul's turn, means another node may
 * speak for these souls now: `lost` resolves and the node stops rather than speak twice. A
 * fenced claim while a soul opens is not that: the opening reads the history again
 * (openReplicatedSoul.ts), and an opening that still fails fails that soul alone, opened again later.
 */
import { hostname } from "node:os";
import type { Bus, ClusterSubjects, LeaseStore, NodeLease, SoulHistoryLog } from "../../bus/index.ts";
import { recordMissedPerceptions } from "./missedPerceptions.ts";
import type { ActorStore, Store } from "../../store/index.ts";
import { DEFAULT_SNAPSHOT_EVERY, loggedCompaction } from "./historyCompaction.ts";
import { openReplicatedSoul } from "./openReplicatedSoul.ts";
import type { ReplicatedActorStore } from "./replicatedActorStore.ts";

export interface NodeFailoverOptions {
  bus: Bus;
  store: Store;
  nodeId: string;
  leaseMs: number;
  /** A new snapshot every this many records of a soul, the older records then removed (default DEFAULT_SNAPSHOT_EVERY; 0: never). */
  snapshotEvery?: number;
  log: (line: string) => void;
  /**
   * Souls move between nodes (placement: auto): a soul taken from another node, or opened for
   * the first time, gets the perceptions it missed from the stream (missedPerceptions.ts),
   * read from this long before its last record.
   */
  moves?: { subjects: ClusterSubjects; replayMarginMs: number };
}

export interface NodeFailover {
  readonly epoch: number;
  readonly leases: LeaseStore;
  /** Resolves with why once this node may no longer speak for its souls. */
  readonly lost: Promise<string>;
  /** Takes the soul and brings its local copy up to its history (once per process). */
  prepare(soulId: string): Promise<void>;
  /** The prepared soul's replicating store. */
  storeOf(soulId: string): ActorStore;
  /** After a revert rewrote the local copy: the whole soul goes to its history as a snapshot. */
  snapshot(soulId: string): Promise<void>;
  /** Lets the soul go (it moved to another node): its lease is released, and it is opened again if it comes back. */
  releaseSoul(soulId: string): Promise<void>;
  /** The souls this process has opened (and holds the leases of). */
  openedSouls(): string[];
  /**
   * The node stops: a soul's append that fails from now on is not sent again, so no running
   * turn (and no opening) waits for NATS for ever; the soul's next opening takes the history's
   * word for whether its last record landed.
   */
  stopRetrying(): void;
  /** Lets the node's lease go, so other nodes may take its souls at once. */
  release(): Promise<void>;
}

export async function startNodeFailover(o: NodeFailoverOptions): Promise<NodeFailover> {
  if (!o.bus.leases || !o.bus.soulHistory) throw new Error("runtime.failover needs a cluster on NATS (JetStream keeps the souls' history and leases); the in-process bus has neither");
  const leases: LeaseStore = o.bus.leases(o.leaseMs);
  const log: SoulHistoryLog = o.bus.soulHistory();
  const lease: NodeLease = await leases.holdNode(o.nodeId, `${hostname()}:${o.store.path}`, (holder) =>
    o.log(`node ${o.nodeId}: another process holds this node's lease (${holder}); waiting up to ${o.leaseMs} ms for it to lapse`),
  );
  let resolveLost!: (why: string) => void;
  const lost = new Promise<string>((r) => (resolveLost = r));
  // A lease that cannot say why it was lost is lost all the same.
  lease.lost.then(resolveLost, (err: unknown) => resolveLost(`node ${o.nodeId}'s lease failed: ${err instanceof Error ? err.message : String(err)}`));
  const opened = new Map<string, ReplicatedActorStore>();

  const compaction = loggedCompaction(o.nodeId, o.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY, o.log);

  const opening = new Map<string, Promise<void>>();
  // Souls claimed from another node whose missed perceptions are still to be read: kept until
  // read, so a failed read is tried again at the next opening (the claim is not made twice).
  const toReplay = new Map<string, number>();
  const open = async (soulId: string): Promise<void> => {
    const result = await openReplicatedSoul({
      local: o.store.actor(soulId),
      log,
      leases,
      nodeId: o.nodeId,
      epoch: lease.epoch,
      compaction,
      onFenced: (id) => resolveLost(`soul '${id}' was taken over by another node (its history has a record this node did not write)`),
      say: (line) => o.log(`node ${o.nodeId}: ${line}`),
      keepTrying: () => retrying,
    });
    if (result.restored !== "current") o.log(`node ${o.nodeId}: soul ${soulId} ${result.restored === "seeded" ? "sent to its replicated history" : `rebuilt from its replicated history (${result.applied} turns)`}`);
    if (o.moves && (result.previous === undefined || result.previous.node !== o.nodeId)) toReplay.set(soulId, (result.previous?.at ?? Date.now()) - o.moves.replayMarginMs);
    const sinceMs = toReplay.get(soulId);
    if (o.moves && sinceMs !== undefined) {
      const missed = await recordMissedPerceptions({ log, subjects: o.moves.subjects, store: result.store, soulId, sinceMs });
      toReplay.delete(soulId);
      if (missed > 0) o.log(`node ${o.nodeId}: soul ${soulId} had ${missed} perception${missed === 1 ? "" : "s"} waiting from before it came here`);
    }
    opened.set(soulId, result.store);
  };

  // Once the node stops, a soul's append (or opening) that fails is not sent again.
  let retrying = true;
  const stopRetrying = () => void (retrying = false);

  return {
    epoch: lease.epoch,
    leases,
    lost,
    prepare(soulId) {
      if (opened.has(soulId)) return Promise.resolve();
      // One opening per soul at a time: two would both claim it, and the second claim fences the first.
      let pending = opening.get(soulId);
      if (!pending) {
        pending = open(soulId).finally(() => opening.delete(soulId));
        opening.set(soulId, pending);
      }
      return pending;
    },
    storeOf(soulId) {
      const store = opened.get(soulId);
      if (!store) throw new Error(`soul '${soulId}' was not opened for failover on node ${o.nodeId}`);
      return store;
    },
    async snapshot(soulId) {
      await opened.get(soulId)?.snapshot();
    },
    async releaseSoul(soulId) {
      // An opening still under way would take the lease after this released it: wait for it.
      await opening.get(soulId)?.catch(() => undefined);
      const store = opened.get(soulId);
      if (!store) return;
      opened.delete(soulId);
      await store.retire();
      await leases.releaseSoul(soulId, store.owner.lease);
    },
    openedSouls: () => [...opened.keys()],
    stopRetrying,
    async release() {
      // An append or a compaction still under way would fail on the closed connection (and be said in the log): let it end first.
      stopRetrying();
      await Promise.allSettled([...opened.values()].map((store) => store.settled()));
      await lease.release();
    },
  };
}
