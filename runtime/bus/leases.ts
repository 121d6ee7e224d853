/**
 * Who owns a soul (failover, docs/STORAGE.md "Failover"). Two kinds of lease, both in
 * JetStream key-value buckets on NATS (natsLeases.ts):
 *
 * - a node's liveness lease, `ensoul_<cluster>_nodes`, key `<nodeId>`: renewed by the node
 *   every third of its time to live; the bucket's max age removes it when the node stops
 *   renewing (the server's clock decides, so machines' clocks need not agree);
 * - a soul's lease, `ensoul_<cluster>_leases`, key `<soulId>`: which node owns the soul. It is
 *   not renewed one by one (a node may own a hundred thousand souls): it holds while its
 *   node's liveness lease does, and another node takes it over, compare-and-set on its
 *   revision, only once that node's lease is gone.
 *
 * Every commit of a soul carries its owner's soul-lease revision and node-lease revision
 * (its epoch); the history's fence (soulHistoryLog.ts) keeps a stale owner from committing.
 */

export interface NodeLease {
  readonly nodeId: string;
  /** The revision this process took the lease at: its epoch, different for every process that holds it. */
  readonly epoch: number;
  /** Resolves with why once the lease is lost (another process took it, or it could not be renewed in time). */
  readonly lost: Promise<string>;
  /** Stops renewing and deletes the lease, so another node may take the souls over at once. */
  release(): Promise<void>;
}

export interface SoulLeaseHolder {
  node: string;
  revision: number;
}

export interface LeaseStore {
  /**
   * Takes this node's liveness lease. `instance` names this process's place (machine and data
   * directory): a lease left by an earlier process of the same place is taken at once (the data
   * directory's lock says that process is gone); one held from elsewhere is waited for until it
   * lapses, calling `waiting` once with its holder.
   */
  holdNode(nodeId: string, instance: string, waiting?: (holder: string) => void): Promise<NodeLease>;
  /** Whether the node's liveness lease is held. */
  nodeAlive(nodeId: string): Promise<boolean>;
  /** The nodes whose liveness leases are held now, sorted. */
  liveNodes(): Promise<string[]>;
  /** Takes the soul's lease for `nodeId` (free, already its own, or its holder's node gone); LeaseHeldError otherwise. Resolves with its revision. */
  acquireSoul(soulId: string, nodeId: string): Promise<number>;
  holder(soulId: string): Promise<SoulLeaseHolder | undefined>;
  /** Lets the soul go (a move, a clean stop), if `revision` is still its lease's. */
  releaseSoul(soulId: string, revision: number): Promise<void>;
}

export class LeaseHeldError extends Error {
  constructor(
    readonly soulId: string,
    readonly holder: string,
  ) {
    super(`soul '${soulId}' is owned by node ${holder}, whose lease is live`);
    this.name = "LeaseHeldError";
  }
}

export function nodeLeaseBucket(cluster: string): string {
  return `ensoul_${cluster}_nodes`;
}

export function soulLeaseBucket(cluster: string): string {
  return `ensoul_${cluster}_leases`;
}
