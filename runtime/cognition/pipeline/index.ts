/**
 * The single-call cognitive pipeline (Claudius style): one model call answers with tagged
 * cognitive steps; gates decide what the prompt holds; the parser takes the answer apart.
 */
export { runPipeline, streamPipeline, UNIFIED_STEP, type PipelineOptions, type PipelineStream } from "./runPipeline.ts";
export { runSplitPipeline, type SplitPipelineOptions } from "./splitPipeline.ts";
export type { InjectedSections, PipelineResult } from "./turnOutcome.ts";
export {
  assemblePrompt,
  type AssembleInput,
  type AssembledPrompt,
  type EarlierStep,
  type IncomingMessage,
  type PromptInputs,
  type PromptSection,
  type PromptSectionName,
  type Skill,
} from "./assemblePrompt.ts";
export { parsePipelineAnswer, type ParsedPipelineAnswer, type ParseOptions, type PipelineVerbs } from "./parseAnswer.ts";
export { DialogueStreamExtractor } from "./dialogueStream.ts";
export {
  isFirstTurn,
  nextInteraction,
  planTurn,
  shouldCheckSoulState,
  shouldInjectUserModel,
  userModelUpdateAllowed,
  type PlanOptions,
  type TurnPlan,
  type UserModelInjectionReason,
} from "./gating.ts";
export { DEFAULT_PIPELINE_CONFIG, pipelineConfig, isDue, type PipelineConfig } from "./config.ts";
export {
  applySoulStateUpdate,
  isEmotionalState,
  soulStateOf,
  EMOTIONAL_STATES,
  SOUL_STATE_DEFAULTS,
  SOUL_STATE_KEYS,
  SOUL_STATE_TEXT_KEYS,
  type EmotionalState,
  type SoulState,
  type SoulStateKey,
  type SoulStateUpdate,
} from "./soulState.ts";
export { formatSoulNotes, formatSoulState, SOUL_NOTES_HEADING } from "./soulStatePrompt.ts";
export {
  DEFAULT_PROCESSES,
  FRUSTRATED_PROCESS,
  MAIN_PROCESS,
  resolveProcess,
  type PipelineProcess,
} from "./processes.ts";
export { buildCognitiveInstructions, DEFAULT_STEP_INSTRUCTIONS, type InstructionOverrides } from "./instructions.ts";
export { PIPELINE_STEPS, STEP_TAGS, isPipelineStep, orderSteps, tagsOf, type PipelineStep } from "./steps.ts";
export { formatIntuition, type Whisper } from "../daimonicIntuition.ts";
/** The intuition section's cap: the whisper sanitiser's. */
export { WHISPER_MAX_CHARS as INTUITION_MAX_CHARS } from "../sanitizeWhisper.ts";
export {
  PERSONA_REGION,
  USER_MODEL_CHECK_STATEMENT,
  SOUL_STATE_CHECK_STATEMENT,
  pipelineMarker,
  type PipelineMarker,
  type PipelineMemoryKind,
} from "./pipelineMemory.ts";
export { blankUserModel, USER_MODEL_SECTIONS } from "./userModelText.ts";
