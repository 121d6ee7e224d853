/**
 * `ensoul`: what a soul's author needs, and no more. Define a soul (`defineSoul`, the Open
 * Souls hooks, the cognitive steps, `WorkingMemory`, the ISM), then run it in a script
 * (`createSoul` with `openStore` or `createMemoryActorStore`, and an outlet to hear it).
 * Hosting many souls, the bus, the providers, the gates and the bridges are the subpaths
 * `ensoul/node`, `ensoul/bus`, `ensoul/providers`, `ensoul/gates`, `ensoul/bridges` and
 * `ensoul/store`. Named exports, not `export *`: whatever is listed here is a promise to users.
 */

// Defining a soul.
export { defineSoul, SoulBlueprintError } from "../actors/soul/index.ts";
export type {
  SoulBlueprint,
  SoulDefinition,
  SoulModels,
  ProcessDeclaration,
  DeclaredProcess,
  DeclaredSubprocess,
  MentalProcess,
  MentalProcessArgs,
  MemoryIntegrator,
  MemoryIntegratorArgs,
  ProcessParams,
  ProcessRef,
  ProcessResult,
  TransitionOptions,
  Perception,
  PerceptionInput,
} from "../actors/soul/index.ts";
export { defaultMemoryIntegrator, perceptionMemory, CORE_REGION } from "../actors/soul/index.ts";

// The hooks a mental process calls.
export { useActions, usePerceptions, useProcessManager, useProcessMemory, useSoulMemory, useUserModels } from "../actors/soul/index.ts";
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
} from "../actors/soul/index.ts";
// State shared with other souls and clients, and events for whoever is watching (never stored).
export { useSharedContext, emitEphemeral } from "../actors/soul/index.ts";
export { useSoulStore, useBlueprintStore, type SoulStoreHook, type SoulStoreGetOptions } from "../actors/soul/index.ts";
export { SoulStoreLimitError, createSoulStoreService, DEFAULT_SOUL_STORE_LIMITS, type VectorRecord, type VectorRecordWithDistance, type DocumentSearchOptions, type SoulStoreLimits, type Embedder } from "../runtime/store/index.ts";
export type { SoulSharedContext } from "../actors/soul/index.ts";
// Tools: every call proposed to the soul's gates first, run here or by a tool actor (docs/PROTOCOL.md §14).
export { useTool, type ToolFunction } from "../actors/soul/index.ts";
export {
  defineTool,
  createToolRegistry,
  remoteTool,
  serveToolActor,
  ToolError,
  ToolInputError,
  ToolOutcomeUnknownError,
  ToolRejectedError,
  ToolTimeoutError,
  type Tool,
  type ToolDefinition,
  type ToolRegistry,
  type ToolRunContext,
  type ToolActorHandle,
  type RemoteToolOptions,
} from "../actors/tool/index.ts";
export type { JsonValue, SharedChange, SharedUpdateOptions } from "../runtime/bus/index.ts";

// Working memory and the cognitive steps.
export {
  WorkingMemory,
  ChatMessageRoleEnum,
  createCognitiveStep,
  CognitiveStepError,
  externalDialog,
  internalMonologue,
  mentalQuery,
  decision,
  brainstorm,
  instruction,
  summarize,
  toolUse,
  indentNicely,
  fenceUntrusted,
  stripEntityAndVerb,
  stripEntityAndVerbFromStream,
} from "../runtime/cognition/index.ts";
export type {
  SerializedWorkingMemory,
  WorkingMemoryInit,
  InputMemory,
  Memory,
  CognitiveStep,
  CognitiveStepSpec,
  StepOptions,
  ToolUseCall,
  ToolUseOptions,
  ToolUseResult,
  ToolBox,
  ToolOutcome,
  ToolSpec,
  DecisionInput,
  EnumLike,
} from "../runtime/cognition/index.ts";

// The Implicit Semantic Machine: a goal, a playbook and actions the soul chooses among.
export { implicitSemanticMachine, ismProcess, recurse, DONE_ACTION } from "../actors/ism/index.ts";
export type { IsmAction, IsmProcessConfig, IsmOptions, IsmOutcome, ActionHandler, ActionHandlerResult, ActionResult } from "../actors/ism/index.ts";

// Running one soul in a script.
export { createSoul, createMemoryActorStore, createInProcessOutlet } from "../actors/soul/index.ts";
export type { CreateSoulOptions, Soul, SoulStateView, SoulStatus, SoulEvent, Outlet, InProcessOutlet, Proposal } from "../actors/soul/index.ts";
export { openStore, type Store } from "../runtime/store/index.ts";
