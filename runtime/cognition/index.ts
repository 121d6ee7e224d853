/**
 * The cognition kernel's public surface: working memory, the cognitive step factory and the
 * standard steps (Open Souls compatible), the per-turn cognition context, and the helpers
 * for tagged single-call answers, untrusted input and structured answers.
 */
export { WorkingMemory, type SerializedWorkingMemory, type WorkingMemoryInit } from "./WorkingMemory.ts";
export {
  ChatMessageRoleEnum,
  DEFAULT_REGION,
  regionOf,
  toMemory,
  type InputMemory,
  type Memory,
} from "./Memory.ts";
export {
  createCognitiveStep,
  CognitiveStepError,
  type CognitiveStep,
  type CognitiveStepSpec,
  type StepOptions,
} from "./createCognitiveStep.ts";
export {
  runWithCognition,
  currentCognition,
  defaultCognitionContext,
  resolveStepModel,
  type CognitionContext,
  type ModelCallRequest,
  type ResolvedModel,
} from "./CognitionContext.ts";
export {
  externalDialog,
  internalMonologue,
  mentalQuery,
  decision,
  brainstorm,
  instruction,
  summarize,
  toolUse,
  TOOL_USE_DEFAULT_ROUNDS,
  choiceValues,
  type DecisionInput,
  type EnumLike,
  type VerbInstructions,
  type ToolUseCall,
  type ToolUseOptions,
  type ToolUseResult,
} from "./steps/index.ts";
export { stripEntityAndVerb, stripEntityAndVerbFromStream } from "./stripEntityAndVerb.ts";
export {
  COGNITIVE_TAGS,
  INTERNAL_MONOLOGUE_VERBS,
  EXTERNAL_DIALOGUE_VERBS,
  UNTRUSTED_NOTICE,
  parseTaggedAnswer,
  extractTag,
  extractTags,
  extractVerb,
  extractBoolean,
  stripTags,
  parseKeyValueLines,
  neutralizeTags,
  fenceBlock,
  fenceUntrusted,
  type CognitiveTag,
  type ExtractedTag,
  type TaggedSection,
  type TagOptions,
  type NeutralizeOptions,
} from "./taggedXml.ts";
export {
  CONVERSATION_LABEL,
  UNTRUSTED_KEY,
  isUntrustedMemory,
  quotedName,
  safeName,
  toPromptMessage,
  untrustedMemory,
} from "./untrustedMemory.ts";
export { stripMarkdownFences, extractJson, parseJsonAnswer, toJsonSchema, type JsonAnswer } from "./sanitize.ts";
export { indentNicely } from "./indentNicely.ts";
export { stripInvisible } from "./invisibleText.ts";
export * from "./pipeline/index.ts";

// For the other folders of ensoul (imports across folders go through this file).
export { DAIMONIC_REGION, DAIMONIC_WHISPER_KEY, type DaimonicWhisper, daimonicMemory, formatDaimonicIntuition, readDaimonicWhisper, withDaimonicIntuition, withoutDaimonicIntuition } from "./daimonicIntuition.ts";
export { type SanitizeWhisperOptions, WHISPER_MAX_CHARS, sanitizeWhisper } from "./sanitizeWhisper.ts";
export { StepTally, type StepTrace, type StepTraceListener } from "./stepTrace.ts";
export type { ToolBox, ToolOutcome, ToolSpec } from "./ToolBox.ts";
