/**
 * The words every actor shares, below all of them: a perception (what comes in), a mental
 * process and the turn it runs in (what the soul and its ISM child both run), a proposal and
 * the outlet it is delivered through (what goes out, and what gates, bridges and tools
 * review). The soul, the ISM, the gates and the daimons import these from here, so none of
 * them has to import another to speak of them; `actors/soul/index.ts` re-exports them for
 * blueprint authors.
 */
export type { Perception, PerceptionInput } from "./Perception.ts";
export { PERSON_META_KEYS } from "./Perception.ts";
export type {
  MentalProcess,
  MentalProcessArgs,
  MemoryIntegrator,
  MemoryIntegratorArgs,
  ProcessParams,
  ProcessRef,
  ProcessResult,
  TransitionOptions,
} from "./MentalProcess.ts";
export { currentTurn, requireTurn, runInTurn, type TurnScope } from "./turnScope.ts";
export { isInterception, type Interception, type Proposal, type ProposalKind, type ReviewVerdict } from "./Proposal.ts";
export { createInProcessOutlet, type ChunkListener, type InProcessOutlet, type Outlet, type ProposalListener, type ReviewContext } from "./outlet.ts";
export { machineModelJson, stateJson, type JsonObject, type JsonValue, type MachineJson, type StateJson, type TransitionJson } from "./machineModel.ts";
