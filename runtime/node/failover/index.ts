export { openReplicatedSoul, type OpenedSoul, type OpenSoulOptions } from "./openReplicatedSoul.ts";
export { DEFAULT_SNAPSHOT_EVERY, type CompactionEvent, type CompactionOptions } from "./historyCompaction.ts";
export { ReplicatedActorStore, type ReplicatedStoreHooks } from "./replicatedActorStore.ts";
export { RecordNotLandedError, SoulFencedError, type ReplicaPosition } from "./recordAppender.ts";
export { decodeRecord, encodeRecord, REPLICA_NAMESPACE, type HistoryRecord, type RecordOwner, type ReplicaMark } from "./historyRecord.ts";
export { startNodeFailover, type NodeFailover, type NodeFailoverOptions } from "./nodeFailover.ts";
export { startSoulOwnership, rendezvousNode, type OwnershipChange, type SoulOwnership } from "./soulOwnership.ts";
export { followOwnership, openSouls } from "./soulMoves.ts";
