/**
 * The node: a process of an ensoul cluster, hosting the souls a cluster config gives it on
 * the bus (NATS across processes, the in-process bus for a single-process run), with their
 * daimons, gates and control surface. `ensoul up` is a thin command around `startNode`;
 * `clusterClient` is what the other commands use to talk to running nodes.
 */
export { startNode, type EnsoulNode, type StartNodeOptions } from "./Node.ts";
export { currentActor, inActor, type SupervisedActor } from "./actorScope.ts";
export { DEFAULT_BACKOFF, type ActorFailure, type Backoff } from "./Supervisor.ts";
export {
  blueprintOf,
  clusterConfigSchema,
  parseClusterConfig,
  resolveDaimon,
  type BridgeConfig,
  type ClusterConfig,
  type ClusterConfigInput,
  type DaimonConfigEntry,
  type RuntimeSettings,
  type SkillGateConfig,
  type SoulConfig,
} from "./clusterConfig.ts";
export { ConfigError, formatPath } from "./configError.ts";
export { DEFAULT_DATA_DIR, LOCAL_NODE, nodeDataDir } from "./dataDirectory.ts";
export { NodeStopError } from "./nodeShutdown.ts";
export {
  BUILTIN_GATES,
  type ApprovalGateSpec,
  type BouncerGateSpec,
  type BudgetGateSpec,
  type CustomGateSpec,
  type GateSpec,
  type LengthGateSpec,
  type LocalGateSpec,
  type RemoteGateSpec,
} from "./gateConfig.ts";
export { configNodes, firstNode, nodeOf, servesSkill, soulsFor, type Placement } from "./soulPlacement.ts";
export { CONFIG_FILE_CANDIDATES, clusterConfigFrom, findConfigFile, loadClusterConfig, type LoadedClusterConfig } from "./loadClusterConfig.ts";
export {
  CONTROL_VERBS,
  decodeControl,
  encodeControl,
  isControlError,
  type ControlError,
  type ControlVerb,
  type DaimonModeReply,
  type DaimonModeRequest,
  type DaimonStatusEntry,
  type FailedPerception,
  type MemoryRequest,
  type NodeCounters,
  type NodeStatus,
  type RevertRecord,
  type RevertReply,
  type RevertRequest,
  type SoulDetailReply,
  type SoulMemoryReply,
  type SoulRunStatus,
  type SoulStatusEntry,
  type StatusRequest,
  type StopReply,
  type TokenCount,
  type TurnsReply,
  type TurnsRequest,
} from "./controlProtocol.ts";
export { createNodeRegistry, registryStatus, type NodeRegistry, type RegistryContext, type RegistrySoul } from "./nodeRegistry.ts";
export { connectClusterBus, connectFailure, NatsUnreachableError, type NatsConnectOptions } from "./natsConnection.ts";
export { heardPerceptionId, hearingConsumerName } from "./hearing.ts";
export { UNKNOWN_LISTENER } from "./busOutlet.ts";
export { ModelConfigError } from "./nodeCognition.ts";
export {
  ClusterClientError,
  discoverNodes,
  NodeDownError,
  findSoul,
  nodeSouls,
  sawFullPeriod,
  requestControl,
  type DiscoveredNode,
  type DiscoverOptions,
} from "./clusterClient.ts";
export { NodeRequestError, requestRevert, requestSoulDetail, requestTurns, type NodeRequestFailure } from "./debugClient.ts";
export { isSoulPath, loadSoulModule, soulIdOfPath, SoulModuleError } from "./soulModule.ts";
export { createSoulLog } from "./soulLog.ts";
export { failedPerceptionsOf, MAX_FAILED_LISTED } from "./failedPerceptionList.ts";
export { rendezvousNode } from "./failover/index.ts";
