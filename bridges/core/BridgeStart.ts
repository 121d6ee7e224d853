/**
 * What a node gives a bridge to start it, and what it gets back. Each platform folder exports
 * one `start` of this shape; bridges/index.ts picks it by the config entry's `type`.
 */
import type { ActorOptions } from "xstate";
import type { WhisperRequestHandler } from "../../actors/daimon/index.ts";
import type { Bus, ClusterSubjects } from "../../runtime/bus/index.ts";
import type { Store } from "../../runtime/store/index.ts";
import type { LedgerBounds, StreamBounds } from "./bridgeBounds.ts";
import type { bridgeMachine, BridgeCounters } from "./bridgeMachine.ts";
import { BridgeRuntime, type BridgeRuntimeOptions } from "./BridgeRuntime.ts";
import { DEFAULT_POLICY, type BridgePolicy } from "./bridgePolicy.ts";
import type { ChannelQueue } from "./ChannelQueue.ts";
import { EditingSink } from "./EditingSink.ts";
import type { BridgeType } from "./PlatformMessage.ts";
import type { PlatformOutlet } from "./SpeechSink.ts";

/** A `bridges` entry of the cluster config: `{type, soul, node?, options?}`. */
export interface BridgeEntry {
  type: BridgeType;
  soul: string;
  node?: string;
  options?: Record<string, unknown>;
}

export interface BridgeStartContext {
  entry: BridgeEntry;
  /** Unique on the node: `<type>-<soul>`, or `options.name`. */
  name: string;
  bus: Bus;
  subjects: ClusterSubjects;
  store: Store;
  /** Where tokens are read (`SLACK_BOT_TOKEN`, `DISCORD_TOKEN`, `ENSOUL_HTTP_TOKEN`...). Never printed. */
  env: Readonly<Record<string, string | undefined>>;
  /** The soul's display name (the bot's name where the platform lets a bridge choose it). */
  soulName: string;
  report(err: unknown, what: string): void;
  /** A warning the bridge keeps running through (a platform's rate limit). */
  log(line: string): void;
  /** What the bridge says when all is well (its start-up line): the node's log at `info`. */
  info(line: string): void;
  inspect?: ActorOptions<typeof bridgeMachine>["inspect"];
  /** Answers `POST /api/whisper` for the soul, when it has a daimon (the HTTP bridge serves it). */
  whisper?: WhisperRequestHandler;
}

export interface BridgeStatus {
  name: string;
  type: BridgeType;
  soul: string;
  state: string;
  counters: BridgeCounters;
  lastError?: string;
  /** Where it listens, for bridges that serve HTTP. */
  url?: string;
}

export interface BridgeHandle {
  readonly name: string;
  readonly runtime: BridgeRuntime;
  status(): BridgeStatus;
  stop(): Promise<void>;
}

export type StartBridge = (ctx: BridgeStartContext) => Promise<BridgeHandle>;

/** The status of a runtime, with what the platform adds. */
export function statusOf(runtime: BridgeRuntime, extra: Partial<BridgeStatus> = {}): BridgeStatus {
  const context = runtime.actor.getSnapshot().context;
  return { name: runtime.name, type: runtime.type, soul: runtime.soul, state: runtime.state, counters: context.counters, ...(context.lastError ? { lastError: context.lastError } : {}), ...extra };
}

/** The core runtime of the bridge a start context describes, with the platform's policy (default: DEFAULT_POLICY), ledger bounds (bridgeBounds.ts) and publish fault point. */
export function runtimeFor(ctx: BridgeStartContext, policy: BridgePolicy | undefined, extra: Pick<BridgeRuntimeOptions, "publishPoint" | "ledger"> = {}): BridgeRuntime {
  return new BridgeRuntime({
    ...extra,
    name: ctx.name,
    type: ctx.entry.type,
    soul: ctx.entry.soul,
    bus: ctx.bus,
    subjects: ctx.subjects,
    store: ctx.store,
    policy: policy ?? DEFAULT_POLICY,
    report: ctx.report,
    log: ctx.log,
    ...(ctx.inspect ? { inspect: ctx.inspect } : {}),
  });
}

/** A chat platform's sink (Slack, Discord): speech posted and edited through `outlet`, counted and reported on the runtime, a reply given up on dead-lettered. */
export function chatSinkFor(runtime: BridgeRuntime, outlet: PlatformOutlet, queue: ChannelQueue, streams?: Partial<StreamBounds>): EditingSink {
  const hooks = {
    count: (counter: keyof BridgeCounters) => runtime.count(counter),
    report: (err: unknown, what: string) => runtime.report(err, what),
    gaveUp: (speechId: string, reply: Parameters<BridgeRuntime["deadLetterReply"]>[1], err: unknown, tries: number) => runtime.deadLetterReply(speechId, reply, err, tries),
  };
  return new EditingSink(outlet, runtime.ledger, queue, hooks, streams ?? {});
}
