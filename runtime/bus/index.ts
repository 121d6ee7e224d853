/**
 * The bus: one Bus interface, two implementations (in-process, NATS), the subject
 * namespace, the envelope codec and the dead-letter record. docs/PROTOCOL.md describes the
 * same things as a wire protocol for clients in other languages.
 */
export type {
  Bus,
  BusHeaders,
  BusMessage,
  DurableConsumer,
  DurableHandler,
  DurableMessage,
  DurableOptions,
  HandlerErrorReporter,
  MessageHandler,
  PublishOptions,
  RequestOptions,
  SubscribeOptions,
  Subscription,
} from "./Bus.ts";
export { createInProcessBus, type InProcessBusOptions } from "./inProcessBus.ts";
export { connectNatsBus, type NatsBusOptions } from "./natsBus.ts";
export { MSG_ID_HEADER } from "./natsMessages.ts";
export { PULL_EXPIRES_MS } from "./natsStream.ts";
export {
  assertName,
  clusterSubjects,
  isValidName,
  NAME_MAX_LENGTH,
  parseSubject,
  SOUL_VERBS,
  soulOfSubject,
  streamName,
  streamSubjects,
  SUBJECT_ROOT,
  type ClusterSubjects,
  type ParsedSubject,
  type SoulVerb,
} from "./subjects.ts";
export { assertPublishSubject, assertSubscribeSubject, subjectMatches } from "./subjectMatch.ts";
export {
  bodySchemas,
  decodeEnvelope,
  DEFAULT_MAX_ENVELOPE_BYTES,
  encodeEnvelope,
  ENVELOPE_KINDS,
  ENVELOPE_VERSION,
  EnvelopeError,
  envelopeSchema,
  formatIssues,
  isKind,
  makeEnvelope,
  portableValueProblem,
  VERDICTS,
  type BodyByKind,
  type CodecOptions,
  type DecodeResult,
  type Envelope,
  type EnvelopeKind,
  type EventBody,
  type MakeEnvelopeOptions,
  type PerceptionBody,
  type ProposalBody,
  type SpeechBody,
  type VerdictBody,
  type WhisperBody,
} from "./envelope.ts";
export {
  deadLetter,
  decodeDeadLetter,
  encodeDeadLetter,
  makeDeadLetter,
  observeDeadLetters,
  DEAD_LETTER_HEAD_BYTES,
  type DeadLetter,
  type DeadLetterInput,
  type DeadLetterObserver,
} from "./dead.ts";
export { DEAD_LETTER_CATEGORIES, deadLetterCategory, type DeadLetterCategory } from "./deadLetterCategory.ts";
export { acceptEnvelopes, type AcceptOptions } from "./receive.ts";
export { decodePlainMsgpack, plainMsgpackProblem } from "./plainMsgpack.ts";
// The credential shapes live with the log (runtime/log), which redacts every line it prints.
export { redactSecrets, REDACTED, SECRET_PATTERNS, type SecretPattern } from "../log/index.ts";
export {
  BusClosedError,
  BusError,
  BusTimeoutError,
  DurablePublishError,
  InvalidNameError,
  InvalidSubjectError,
  NoRespondersError,
  NotDurableSubjectError,
  PayloadTooLargeError,
  SubscriptionRefusedError,
} from "./errors.ts";
export { nextUlid } from "./ulids.ts";
export {
  encodeSharedValue,
  isSharedConflict,
  sharedBucketName,
  sharedKey,
  SharedConflictError,
  SHARED_VALUE_MAX_BYTES,
  type JsonValue,
  type SharedChangeListener,
  type SharedEntry,
  type SharedKv,
} from "./sharedKv.ts";
export { createMemorySharedKv } from "./memorySharedKv.ts";
export { openSharedContext, type ClosableSharedContext, type SharedChange, type SharedContext, type SharedUpdateOptions } from "./sharedContext.ts";
export { DEFAULT_SHARED_CONTEXT_LIMITS, SharedContextPool, type SharedContextLimits } from "./sharedContextPool.ts";
export { assertHistoryRecordSize, HistoryCompactionTooLargeError, HistoryDuplicateError, HistoryFencedError, HistoryRecordTooLargeError, historyStreamName, historySubject, MAX_HISTORY_RECORD_BYTES, type AppendOptions, type HistoryEntry, type HistoryRead, type SoulHistoryLog } from "./soulHistoryLog.ts";
export { LeaseHeldError, nodeLeaseBucket, soulLeaseBucket, type LeaseStore, type NodeLease, type SoulLeaseHolder } from "./leases.ts";
