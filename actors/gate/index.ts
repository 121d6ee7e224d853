/**
 * Skill gates: the deliberate engine between what a soul proposes and the world. A chain of
 * gates, highest priority first, verifies, transforms or intercepts every proposal, in
 * process or through skill-gate actors on the bus, and fails closed.
 */
export { DECISION_KINDS, hold, intercept, isGateIntercept } from "./Gate.ts";
export type { DecisionKind, DecisionListener, Gate, GateContext, GateDecision, GateIntercept, GatePhase, GateVerdict } from "./Gate.ts";
export { GateError, GateTimeoutError, MalformedVerdictError } from "./errors.ts";
export { chainVerdict, createGateChain, DEFAULT_GATE_TIMEOUT_MS, evaluateGate } from "./gateChain.ts";
export type { BlockingDecision, ChainResult, GateChain, GateChainOptions, GateOutcome } from "./gateChain.ts";
export { parseProposal, proposalSchema } from "./proposalSchema.ts";
export { GATE_DECISION_EVENT, publishDecisions } from "./publishDecisions.ts";
export type { DecisionPublisher, GateDecisionEventData, PublishDecisionsOptions } from "./publishDecisions.ts";
export { DEFAULT_MAX_ATTEMPTS, proposeWithRetries, rejectionFeedback } from "./proposeWithRetries.ts";
export type { RetryOptions, RetryResult } from "./proposeWithRetries.ts";
export { GateDispatchError, gatedOutlet } from "./gatedOutlet.ts";
export type { GatedOutlet, GatedOutletOptions } from "./gatedOutlet.ts";
export { actionTarget, bouncer } from "./bouncer.ts";
export type { BouncerOptions } from "./bouncer.ts";
export { createSecretScanner, MIN_VAULT_VALUE_LENGTH, SECRET_PATTERNS } from "./secrets.ts";
export type { SecretFinding, SecretPattern, SecretScanner } from "./secrets.ts";
export { budgetGate, periodStart } from "./budgetGate.ts";
export type { BudgetGate, BudgetGateOptions, BudgetLimits, BudgetPeriod, BudgetUsage, BudgetWindow, ModelPrice } from "./budgetGate.ts";
export { DEFAULT_MAX_RESPONSE_CHARS, lengthGate, TRUNCATION_MARKER, truncate } from "./lengthGate.ts";
export type { LengthGateOptions } from "./lengthGate.ts";
export { APPROVAL_GATE, approvalGate, createApprovals } from "./approvals.ts";
export type {
  ApprovalDispatcher,
  ApprovalGateOptions,
  ApprovalOutcome,
  ApprovalPerception,
  ApprovalRefusal,
  ApprovalResult,
  Approvals,
  ApprovalsOptions,
  HeldProposal,
} from "./approvals.ts";
export { DEFAULT_REMOTE_GATE_TIMEOUT_MS, GATE_PHASE_HEADER, remoteGate } from "./remoteGate.ts";
export type { RemoteGateOptions } from "./remoteGate.ts";
export { DEFAULT_SKILL_GATE_DEADLINE_MS, skillGateMachine, startSkillGate } from "./skillGateActor.ts";
export type { SkillGateContext, SkillGateEvent, SkillGateHandle, SkillGateInput, SkillGateMachine, SkillGateOptions, SkillGateStats } from "./skillGateActor.ts";
export { errorVerdictBody, gateAddress, proposalEnvelope, readVerdict, verdictBody } from "./verdictWire.ts";
export { inPhase, whenAction, whenKind, whenPerception } from "./triggers.ts";
export type { GateTrigger } from "./triggers.ts";
