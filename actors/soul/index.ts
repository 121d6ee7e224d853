/**
 * The soul actor: a blueprint compiled into an XState machine, run with Open Souls hooks,
 * committed turn by turn to LMDB.
 */
export { defineSoul, SoulBlueprintError } from "./defineSoul.ts";
export type { SoulBlueprint, SoulDefinition, SoulModels, ProcessDeclaration, DeclaredProcess, DeclaredSubprocess } from "./defineSoul.ts";
export type {
  MentalProcess,
  MentalProcessArgs,
  MemoryIntegrator,
  MemoryIntegratorArgs,
  ProcessParams,
  ProcessRef,
  ProcessResult,
  TransitionOptions,
} from "../vocabulary/index.ts";
export type { Perception, PerceptionInput } from "../vocabulary/index.ts";
export { PERSON_META_KEYS } from "../vocabulary/index.ts";
export { useActions, usePerceptions, useProcessManager, useProcessMemory, useSoulMemory, useUserModels } from "./hooks.ts";
export type {
  DispatchedAction,
  PendingScheduledEvent,
  ProcessManager,
  ReadonlyRef,
  Ref,
  ScheduleEventOptions,
  ScheduledPerception,
  SoulActions,
  UserModelsHook,
} from "./hooks.ts";
export { emitEphemeral, useSharedContext, type SoulSharedContext } from "./sharedHooks.ts";
export { useTool, type ToolFunction } from "./toolHooks.ts";
export { defaultMemoryIntegrator, perceptionMemory, CORE_REGION } from "./memoryIntegrator.ts";
export { createSoul } from "./createSoul.ts";
export type { ActorStoreProvider, CreateSoulOptions, Soul, SoulStateView } from "./createSoul.ts";
export type { HeldPerceiveResult, PerceiveResult } from "./SoulIntake.ts";
export type { SoulStatus } from "./SoulStatus.ts";
export { HeldPerceptionReleased } from "./HeldPerceptions.ts";
export { DEFAULT_MAX_QUEUED, SoulQueueFull, isSoulQueueFull } from "./SoulQueueFull.ts";
export { PerceptionQueue } from "./PerceptionQueue.ts";
export { createSoulHost } from "./soulHost.ts";
export type { SoulHost, SoulHostOptions, SoulRegistryEntry } from "./soulHost.ts";
export { createInProcessOutlet } from "../vocabulary/index.ts";
export type { Outlet, InProcessOutlet, ReviewContext } from "../vocabulary/index.ts";
export { isInterception } from "../vocabulary/index.ts";
export type { Proposal, ProposalKind, Interception, ReviewVerdict } from "../vocabulary/index.ts";
export type { SoulEvent, SoulEventListener, SoulErrorPhase } from "./SoulEvent.ts";
export { failedTurnLine, failedTurnOf, failureReason, turnFailureOf, type FailedTurn, type TurnFailure } from "./FailedTurn.ts";
export { shownPath, soulSourceOf } from "./soulSource.ts";
export { createManualClock, systemClock } from "./scheduler.ts";
export type { Clock, ManualClock } from "./scheduler.ts";
export { createSoulMachine, MAX_EXECUTE_NOW } from "./soulMachine.ts";
export type { SoulMachine, SoulMachineContext, SoulMachineEvent } from "./soulMachine.ts";
export { createMemoryActorStore } from "./memoryActorStore.ts";
export { currentTurn, type TurnScope } from "../vocabulary/index.ts";
export type { StoredTurnTrace, StepRecordStored, ProposalOutcome, MemorySegment } from "./TurnTrace.ts";
export { ISM_STATE, processEvent, soulMachineJson } from "./soulMachineJson.ts";
export { missingService, NO_SERVICES, type SoulServices, type SoulServicesOf } from "./SoulServices.ts";
export { useSoulStore, useBlueprintStore, type SoulStoreHook, type SoulStoreGetOptions } from "./storeHooks.ts";
