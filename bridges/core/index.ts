/**
 * What every bridge shares: the message a platform hands in and the perception it becomes,
 * the policy, the ledger that makes each message one perception and each reply one post, the
 * machine that shows a bridge's connection, and the sinks that take a soul's speech back out.
 */
export { BridgeLedger, DEFAULT_LEDGER_KEEP_MS, DEFAULT_LEDGER_PRUNE_EVERY_MS, type PendingReply, type PostEntry, type TakenMessage } from "./BridgeLedger.ts";
export { DEFAULT_MAX_STREAMS, DEFAULT_STREAM_IDLE_MS, ledgerBoundsSchema, streamBoundsSchema, type LedgerBounds, type StreamBounds } from "./bridgeBounds.ts";
export { bridgeMachine, bridgeStateOf, EMPTY_COUNTERS, type BridgeActor, type BridgeContext, type BridgeCounters, type BridgeEvent, type BridgeSnapshot } from "./bridgeMachine.ts";
export { bridgePolicySchema, decide, DEFAULT_POLICY, type BridgePolicy, type PolicyDecision } from "./bridgePolicy.ts";
export { BridgeRuntime, type BridgeRuntimeOptions, type ReceiveResult } from "./BridgeRuntime.ts";
export { chatSinkFor, runtimeFor, statusOf, type BridgeEntry, type BridgeHandle, type BridgeStartContext, type BridgeStatus, type StartBridge } from "./BridgeStart.ts";
export { ChannelQueue, RateLimitedError, retryAfterOf, type ChannelQueueOptions, type RateLimited } from "./ChannelQueue.ts";
export { EditingSink, type EditingSinkHooks, type EditingSinkOptions } from "./EditingSink.ts";
export { conversationKey, perceptionOf, platformPerceptionId, type BridgeType, type Conversation, type PlatformMessage } from "./PlatformMessage.ts";
export type { PlatformOutlet, PostedRef, PostKey, Speaker, Speech, SpeechSink } from "./SpeechSink.ts";
export { openFence, splitText } from "./splitText.ts";
