/**
 * Persistence: one LMDB environment per node, a key range per actor, one transaction per
 * turn. See DESIGN.md, "Persistence (LMDB)".
 */
export { openStore, type Store } from "./Store.ts";
export { StoreFullError } from "./lmdbErrors.ts";
export type { LmdbActorStore } from "./LmdbActorStore.ts";
export type { KvEntry, KvKey, KvNamespace, KvRangeOptions } from "./KvNamespace.ts";
export type { KeyPart } from "./keys.ts";
export { ACTOR_ID_MAX_LENGTH, assertActorId } from "./keys.ts";
export { DEFAULT_PATH } from "./defaults/index.ts";
export {
  StoreError,
  TurnNotKeptError,
  DEFAULT_TURN_LOG_KEEP,
  type ActorHistory,
  type LoggedTurn,
  type RevertOutcome,
  type TurnLogOptions,
  type TurnLogKind,
  type ActorState,
  type ActorStore,
  type InboxEntry,
  type InboxRecord,
  type InboxStatus,
  type KvReadEntry,
  type KvWrite,
  type OutboxEntry,
  type ScheduledEntry,
  type SerializedMemory,
  type StoreOptions,
  type TurnCommit,
} from "./types.ts";
export {
  userModels,
  blankUserModel,
  userModelFileName,
  USER_MODEL_SECTIONS,
  USER_MODELS_NAMESPACE,
  type UserModel,
  type UserModels,
  type UserModelVersion,
} from "./userModels.ts";
export { userModelKey, userModelPrefix, userOfModelKey } from "./userModelKeys.ts";
export type { ActorDump, ActorKvEntry, DoneInboxIds, DumpedInboxEntry } from "./ActorTransfer.ts";
export { exportSoul, importSoul, serializeSoulFile, type ExportSoulOptions, type ImportSoulOptions, type ImportSoulResult } from "./soulFile.ts";
export { parseSoulFile, SOUL_FILE_FORMAT, SOUL_FILE_VERSION, SoulFileError, type SoulFile, type SoulFileState, type SoulFileUserModel } from "./soulFileFormat.ts";
export { formatPath } from "./fieldPath.ts";
export { sameMemory, sharedPrefix } from "./MemoryLog.ts";
export * from "./documents/index.ts";
