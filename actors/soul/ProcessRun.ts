import type { ActorRefFrom, AnyActorLogic, InputFrom } from "xstate";
import type { SoulServices } from "./SoulServices.ts";
import type { KvReadEntry, ScheduledEntry } from "../../runtime/store/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { Perception } from "../vocabulary/index.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import { requireTurn, type TurnScope } from "../vocabulary/index.ts";
import type { TurnDraft } from "./TurnDraft.ts";

/** The soul-wide services a running process reaches through its hooks. */
export interface RunHost {
  readonly soulId: string;
  readonly blueprint: SoulBlueprint;
  readonly clock: Clock;
  /** The live queue of perceptions waiting behind the running one. */
  queued(): readonly Perception[];
  committedSchedules(): Iterable<ScheduledEntry>;
  /** Committed entries of one of the soul's key/value namespaces, in key order. */
  committedKv(namespace: string, prefix: (string | number)[]): KvReadEntry[];
  emit(event: SoulEvent): void;
  chunk(proposalId: string, text: string): void;
  spawnChild<TLogic extends AnyActorLogic>(logic: TLogic, input: InputFrom<TLogic>, id?: string): ActorRefFrom<TLogic>;
  /** What the soul's hooks reach beyond the soul (SoulServices.ts). */
  readonly services: SoulServices;
}

/** The integrator runs in its own scope, so its hook slots never shift a process's. */
export type RunKind = "process" | "subprocess" | "integrator";

export interface RunInit {
  kind: RunKind;
  process: string;
  perception: Perception;
  draft: TurnDraft;
  invocationCount: number;
  previousProcess: string | undefined;
  signal: AbortSignal;
}

/** Thrown into a cancelled run at its next hook call. */
export class TurnCancelledError extends Error {
  constructor(what: string) {
    super(`${what} was cancelled`);
    this.name = "AbortError";
  }
}

/**
 * One invocation of a process or subprocess: the TurnScope that hooks, steps and the ISM
 * find through AsyncLocalStorage while it runs.
 */
export class ProcessRun implements TurnScope {
  readonly host: RunHost;
  kind: RunKind;
  readonly process: string;
  readonly perception: Perception;
  readonly draft: TurnDraft;
  readonly invocationCount: number;
  readonly previousProcess: string | undefined;
  readonly signal: AbortSignal;
  /** `useProcessMemory` slots are matched to calls by order, as React matches hooks. */
  slot = 0;
  /** Set once the run's result is taken (an ISM that has ended): later hook calls are strays. */
  #sealed = false;

  constructor(host: RunHost, init: RunInit) {
    this.host = host;
    this.kind = init.kind;
    this.process = init.process;
    this.perception = init.perception;
    this.draft = init.draft;
    this.invocationCount = init.invocationCount;
    this.previousProcess = init.previousProcess;
    this.signal = init.signal;
  }

  /** The integrator has run; from here on the scope is the process's. */
  beginProcess(): void {
    this.kind = "process";
    this.slot = 0;
  }

  get soulId(): string {
    return this.host.soulId;
  }

  get soulName(): string {
    return this.host.blueprint.name;
  }

  /** Where this run's process memory lives: subprocesses keep theirs apart from the processes'. */
  get memoryKey(): string {
    if (this.kind === "process") return this.process;
    return this.kind === "subprocess" ? `subprocess:${this.process}` : "integrator";
  }

  pendingPerceptions(): readonly Perception[] {
    return this.host.queued();
  }

  spawnChild<TLogic extends AnyActorLogic>(logic: TLogic, input: InputFrom<TLogic>, id?: string): ActorRefFrom<TLogic> {
    this.assertLive();
    return this.host.spawnChild(logic, input, id);
  }

  log(message: string, data?: Record<string, unknown>): void {
    this.host.emit({ type: "log", soulId: this.soulId, message, process: this.process, ...(data ? { data } : {}) });
  }

  /**
   * The run's result has been taken: a handler the ISM left behind (it was interrupted while
   * the handler ran) must not write into a draft that is about to commit. Unlike an abort,
   * sealing lets speech already streaming run to its end, because the turn waits for it.
   */
  seal(): void {
    this.#sealed = true;
  }

  /** A cancelled run must not write anything more: its next hook call ends it. */
  assertLive(): void {
    if (this.signal.aborted) throw new TurnCancelledError(`${this.kind} '${this.process}'`);
    if (this.#sealed) throw new TurnCancelledError(`${this.kind} '${this.process}' has ended; this late call`);
  }

  /**
   * What an inspector or a log sees: an ISM keeps its turn in its context, and the soul
   * runtime behind it (store, actors, machines) is neither small nor anyone's business.
   */
  toJSON(): { soulId: string; process: string; kind: RunKind; perceptionId: string } {
    return { soulId: this.soulId, process: this.process, kind: this.kind, perceptionId: this.perception.id };
  }
}

/** The running process, for a hook; a clear error outside one or once it is cancelled. */
export function requireRun(hook: string): ProcessRun {
  const turn = requireTurn(hook);
  if (!(turn instanceof ProcessRun)) {
    throw new Error(`${hook}() needs a soul's mental process; this turn scope was not made by createSoul()`);
  }
  turn.assertLive();
  return turn;
}
