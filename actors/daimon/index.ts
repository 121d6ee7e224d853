/**
 * The daimon: an actor that watches a soul's conversation, divines an intuition with its
 * own persona and model (or a remote daimon service), and makes it heard by mode: whispered
 * into the soul as its own recall, spoken aloud under the daimon's name, both, or not at all.
 */
export { DAIMON_MODES, assertDaimonMode, isDaimonMode, speaksIn, whispersIn, type DaimonMode } from "./daimonMode.ts";
export { appendLine, formatTranscript, DEFAULT_TRANSCRIPT_LINES, type TranscriptLine, type TranscriptRole } from "./transcript.ts";
export { sanitizeWhisper, WHISPER_MAX_CHARS, type SanitizeWhisperOptions } from "./sanitizeWhisper.ts";
// The whisper format (DAIMONIC_REGION, DAIMONIC_WHISPER_KEY, formatDaimonicIntuition, ...): the kernel's, named in whisperPrompt.ts.
export * from "./whisperPrompt.ts";
export {
  divineIntuition,
  personaDivination,
  preferredDaimonModel,
  type Divination,
  type DivinationRequest,
  type PersonaDivinationOptions,
} from "./divination.ts";
export {
  applyObservation,
  checkDaimonInput,
  createDaimonMachine,
  daimonMachine,
  daimonPhase,
  DEFAULT_EVERY_N,
  type DaimonActor,
  type DaimonContext,
  type DaimonDelivery,
  type DaimonErrorPhase,
  type DaimonEvent,
  type DaimonImplementations,
  type DaimonMachine,
  type DaimonMachineInput,
  type DaimonObservation,
  type DaimonPhase,
  type DaimonSnapshot,
  type DivineInput,
  type ObservedPerception,
  type ShouldDivine,
} from "./daimonMachine.ts";
export { startDaimon, type DaimonConfig, type DaimonFailurePhase, type DaimonHandle, type StartDaimonOptions } from "./daimonActor.ts";
export {
  DEFAULT_INFLUENCE,
  WHISPER_MAX_BODY_BYTES,
  WHISPER_PATH,
  whisperRequestSchema,
  whisperResponseSchema,
  type WhisperReply,
  type WhisperRequest,
} from "./whisperProtocol.ts";
export {
  DaimonUnavailableError,
  answerWhisper,
  divinationWhisperHandler,
  startWhisperEndpoint,
  type DivinationHandlerOptions,
  type WhisperAnswer,
  type WhisperEndpoint,
  type WhisperEndpointOptions,
  type WhisperRequestHandler,
} from "./whisperHttp.ts";
export { httpDaimon, WhisperClientError, type HttpDaimonOptions, type WhisperClientErrorKind } from "./httpDaimon.ts";
