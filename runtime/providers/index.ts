/**
 * The providers' public surface. Callers outside this folder import from here; the helpers
 * the adapters share (deadline, sdkErrors, sdkSettings, completionStream) stay internal unless listed.
 */
export type {
  ChatMessage,
  ChatRole,
  Completion,
  CompletionRequest,
  CompletionStream,
  LanguageModel,
  MessageRole,
  ResponseFormat,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  Usage,
} from "./LanguageModel.ts";
export { addUsage, zeroUsage } from "./LanguageModel.ts";
export { ProviderError, isProviderError, type ProviderFailureKind } from "./ProviderError.ts";

export { createAnthropicModel, ANTHROPIC_DEFAULT_MODEL, type AnthropicModelOptions } from "./anthropic.ts";
export { createGroqModel, GROQ_DEFAULT_MODEL, type GroqModelOptions } from "./groq.ts";
export { createOfflineModel } from "./offline.ts";

export { withRetry, type RetryInfo, type RetryOptions } from "./retry.ts";
export {
  createCascade,
  CascadeError,
  type Cascade,
  type CascadeFailure,
  type CascadeMemberStatus,
  type CascadeOptions,
  type CascadeStatus,
} from "./cascade.ts";
export {
  consensus,
  ConsensusError,
  type ConsensusAnswer,
  type ConsensusFailure,
  type ConsensusMode,
  type ConsensusOptions,
  type ConsensusResult,
  type ConsensusTally,
} from "./consensus.ts";
export type { ModelChoice, ModelTarget } from "./ModelTarget.ts";
export {
  ModelRegistry,
  ModelNameError,
  createDefaultRegistry,
  defaultModelName,
  parseModelName,
  type ModelSelectionContext,
  type ModelSelector,
  type ParsedModelName,
  type ResolvedModel,
} from "./registry.ts";
export { UsageMeter, estimateTokens, type UsageEntry, type UsageTotals } from "./usage.ts";
export { createCompletionStream, type StreamProducer, type StreamSink } from "./completionStream.ts";
export { stripMarkdownFences, parseJsonText, canonicalJson } from "./jsonAnswer.ts";

// For the other folders of ensoul (imports across folders go through this file).
export { extractJson } from "./jsonAnswer.ts";
export { createEmbeddingsProvider, embeddingsFromEnv, type EmbeddingsOptions, type EmbeddingsProvider } from "./embeddings.ts";
