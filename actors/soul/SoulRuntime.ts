import type { SoulStatus } from "./SoulStatus.ts";
import { createActor, type Actor, type ActorOptions, type ActorRefFrom, type AnyActorLogic, type AnyActorRef, type InputFrom } from "xstate";
import { runWithCognition, type CognitionContext } from "../../runtime/cognition/index.ts";
import type { ActorStore, KvReadEntry, OutboxEntry, ScheduledEntry, TurnCommit } from "../../runtime/store/index.ts";
import { sanitizeWhisper } from "../../runtime/cognition/index.ts";
import { DAIMONIC_WHISPER_KEY, type DaimonicWhisper } from "../../runtime/cognition/index.ts";
import type { IsmMachineInput } from "../ism/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import type { Perception, PerceptionInput } from "../vocabulary/index.ts";
import type { ProcessRun, RunHost } from "./ProcessRun.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { ProposalFlow } from "./ProposalFlow.ts";
import { HeldPerceptions } from "./HeldPerceptions.ts";
import { soulCognition } from "./soulCognition.ts";
import type { Outlet } from "../vocabulary/index.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import { restingSnapshot } from "./restingSnapshot.ts";
import { soulMachineOf, type SoulMachine } from "./soulMachine.ts";
import {
  bindSoulMachineHost,
  type IsmFinishInput,
  type IsmPrepared,
  type RunInput,
  type RunOutput,
  type SoulMachineHost,
  type SubprocessInput,
  type SubprocessOutput,
} from "./soulMachineHost.ts";
import { SoulIntake, type HeldPerceiveResult, type PerceiveResult } from "./SoulIntake.ts";
import { restoreSoulState, toActorState, type SoulState } from "./SoulState.ts";
import { SoulSchedules } from "./SoulSchedules.ts";
import { SoulWrites } from "./SoulWrites.ts";
import { SubprocessPhase, type SubprocessServices } from "./SubprocessPhase.ts";
import { runInTurn } from "../vocabulary/index.ts";
import type { TurnDraft } from "./TurnDraft.ts";
import { TurnRunner, type TurnPlace } from "./TurnRunner.ts";

export interface SoulRuntimeOptions {
  blueprint: SoulBlueprint;
  id: string;
  store: ActorStore;
  outlet: Outlet;
  cognition?: CognitionContext;
  inspect?: ActorOptions<SoulMachine>["inspect"];
  clock: Clock;
  onEvent?: (event: SoulEvent) => void;
  /** Perceptions that may wait behind the running one (default DEFAULT_MAX_QUEUED, SoulQueueFull.ts). */
  maxQueued?: number;
}

/** As the node's whisper intake caps a whisper's source name. */
const WHISPER_SOURCE_MAX_CHARS = 128;

/**
 * A live soul: its machine actor, its committed state, and everything that moves data in and
 * out of the store in order (the inbox, turn commits, the outbox, schedules).
 */
export class SoulRuntime implements SoulMachineHost, RunHost, SubprocessServices {
  readonly soulId: string;
  readonly blueprint: SoulBlueprint;
  readonly clock: Clock;
  readonly store: ActorStore;
  readonly outlet: Outlet;
  readonly machine: SoulMachine;
  readonly actor: Actor<SoulMachine>;
  readonly runHost: RunHost = this;
  status: SoulStatus = "active";
  lastActivity: number;

  #state: SoulState;
  readonly #cognition: CognitionContext | undefined;
  #soulCognition: CognitionContext | undefined;
  readonly #turns: TurnRunner;
  readonly #subprocesses: SubprocessPhase;
  readonly #children = new Set<AnyActorRef>();
  readonly #eventListeners = new Set<(event: SoulEvent) => void>();
  readonly #proposals: ProposalFlow;
  readonly #held: HeldPerceptions;
  readonly #intake: SoulIntake;
  readonly #writes: SoulWrites;
  readonly #schedules: SoulSchedules;
  #idleWaiters: (() => void)[] = [];
  /** Perceptions on their way into the inbox, deliveries and commits not yet settled. */
  #busy = 0;
  /** The write of the latest whisper taken (a new promise for each): what `keepWhisper` waits for. */
  #whisperWrite: Promise<void> = Promise.resolve();

  constructor(options: SoulRuntimeOptions) {
    this.soulId = options.id;
    this.blueprint = options.blueprint;
    this.clock = options.clock;
    this.store = options.store;
    this.outlet = options.outlet;
    this.#cognition = options.cognition;
    if (options.onEvent) this.#eventListeners.add(options.onEvent);
    this.machine = soulMachineOf(options.blueprint);
    this.lastActivity = this.clock.now();
    this.#turns = new TurnRunner(this);
    const busy = (delta: 1 | -1) => {
      this.#busy += delta;
      if (delta < 0) this.#checkIdle();
    };
    this.#proposals = new ProposalFlow({ soulId: this.soulId, outlet: this.outlet, store: this.store, clock: this.clock, emit: (event) => this.emit(event), busy });
    this.#held = new HeldPerceptions(this.soulId, busy);
    this.#writes = new SoulWrites(busy);
    this.#intake = new SoulIntake(this, { held: this.#held, writes: this.#writes, busy, maxQueued: options.maxQueued });
    this.#subprocesses = new SubprocessPhase(this);
    this.#schedules = new SoulSchedules({
      soulId: this.soulId,
      blueprintName: this.blueprint.name,
      clock: this.clock,
      store: this.store,
      writes: this.#writes,
      perceive: (input) => this.#intake.perceive(input, { own: true }),
      emit: (event) => this.emit(event),
      failed: (err, id) => this.#emitError("schedule", err, id),
    });

    const restored = restoreSoulState(this.blueprint, this.store.loadState());
    this.#state = restored.state;
    const current = restored.state.currentProcess;
    if (restored.problem) this.emit({ type: "error", soulId: this.soulId, phase: "restore", message: restored.problem });
    this.actor = createActor(this.machine, {
      id: this.soulId,
      snapshot: restingSnapshot(this.machine, current, this.#state.nextParams) as ActorOptions<SoulMachine>["snapshot"],
      ...(options.inspect ? { inspect: options.inspect } : {}),
      clock: this.clock,
    });
    bindSoulMachineHost(this.actor.system, this);
    this.actor.subscribe({ next: () => (this.#checkIdle(), this.#intake.wake()), error: (err) => (this.#machineFailed(err), this.#intake.wake()) });
    this.actor.start();
    this.#restore();
  }

  /** Re-arms schedules, replays the inbox in order and re-delivers what was never acknowledged. */
  #restore(): void {
    this.#schedules.restore();
    this.#intake.replay();
    const outbox = this.store.pendingOutbox();
    if (outbox.length) this.#proposals.deliver(outbox);
  }

  // ---- the soul's surface -------------------------------------------------------------

  perceive(input: PerceptionInput): Promise<PerceiveResult> {
    return this.#intake.perceive(input);
  }

  /** For a source that keeps each perception until it acknowledges it: see SoulIntake.perceiveHeld. */
  perceiveHeld(input: PerceptionInput): Promise<HeldPerceiveResult> {
    return this.#intake.perceiveHeld(input);
  }

  /** Undefined when the soul can take a perception now; else resolves once it can (SoulIntake.room). */
  room(): Promise<void> | undefined {
    return this.#intake.room();
  }

  /**
   * Keeps a daimon's whisper in soul memory `daimonicWhisper` until the next successful turn
   * that answers an external perception recalls and consumes it (TurnRunner). Sanitised here,
   * whoever sent it; one that is empty once sanitised is dropped with a `whisperIgnored` event.
   * A later whisper replaces a pending one. Each is stored as a new object: the turn that
   * recalls it consumes it only if that same object is still there when it commits.
   */
  whisper(content: string, source: string): void {
    const from = sanitizeWhisper(typeof source === "string" ? source : "", { maxChars: WHISPER_SOURCE_MAX_CHARS }) || "daimon";
    const text = sanitizeWhisper(content);
    if (!text) {
      this.emit({ type: "whisperIgnored", soulId: this.soulId, source: from, reason: "the whisper is empty once sanitised" });
      this.#whisperWrite = Promise.resolve();
      return;
    }
    const whisper: DaimonicWhisper = { content: text, source: from };
    const write = this.#commit(() => {
      const state = { ...this.#state, soulMemory: { ...this.#state.soulMemory, [DAIMONIC_WHISPER_KEY]: whisper } };
      return { state, commit: { state: toActorState(state, restingSnapshot(this.machine, state.currentProcess, state.nextParams)) } };
    }).then(() => this.emit({ type: "whisper", soulId: this.soulId, source: from }));
    // Reported here whoever waits for it; `keepWhisper` hands the failure on to its caller.
    write.catch((err: unknown) => this.#emitError("commit", err));
    this.#whisperWrite = write;
  }

  /**
   * Sends the whisper through the machine (so an inspector sees it) and resolves once it is
   * stored, or at once when it is ignored (empty once sanitised). Rejects when its commit
   * failed: a whisper that is not in the store is not kept, and its sender must know.
   */
  keepWhisper(content: string, source: string): Promise<void> {
    const before = this.#whisperWrite;
    this.actor.send({ type: "WHISPER", content, source });
    if (this.#whisperWrite === before) return Promise.reject(new Error(`soul '${this.soulId}' did not take the whisper; it was not kept`));
    return this.#whisperWrite;
  }

  /** Resolves once every write of the soul so far is durable (a whisper, a commit). */
  flushed(): Promise<void> {
    return this.#writes.flushed();
  }

  onEvent(listener: (event: SoulEvent) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  onSpeech(listener: (proposal: Proposal) => void): () => void {
    return this.#proposals.onSpeech(listener);
  }

  committed(): SoulState {
    return this.#state;
  }

  isIdle(): boolean {
    if (this.#busy > 0) return false;
    const snapshot = this.actor.getSnapshot();
    if (snapshot.status !== "active") return true;
    const { context, value } = snapshot;
    return context.queue.length === 0 && typeof value === "object" && (value as Record<string, unknown>)[context.current] === "idle";
  }

  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Finishes the running turn, cancels subprocesses and timers; queued perceptions stay in the inbox. */
  async stop(): Promise<void> {
    if (this.status === "stopped") return;
    if (this.status === "active") this.status = "stopping";
    this.#schedules.clear();
    this.actor.send({ type: "STOP" });
    if (this.actor.getSnapshot().status === "active") {
      await new Promise<void>((resolve) => {
        const sub = this.actor.subscribe({
          next: (s) => s.status !== "active" && (sub.unsubscribe(), resolve()),
          error: () => resolve(),
          complete: () => resolve(),
        });
      });
    }
    await this.#intake.received();
    await this.flushed();
    this.#held.releaseAll("it stopped");
    this.#proposals.stop();
    await this.#proposals.settled();
    for (const child of this.#children) child.stop?.();
    this.#children.clear();
    this.actor.stop();
    if (this.status === "stopping") this.status = "stopped";
    this.#checkIdle();
  }

  // ---- SoulMachineHost ----------------------------------------------------------------

  runProcess(input: RunInput, signal: AbortSignal): Promise<RunOutput> {
    this.#subprocesses.cancel();
    return this.#turns.run(input, signal);
  }

  prepareIsm(input: RunInput, signal: AbortSignal): Promise<IsmPrepared> {
    this.#subprocesses.cancel();
    return this.#turns.prepareIsm(input, signal);
  }

  ismInput(process: string): IsmMachineInput {
    return this.#turns.ismInput(process);
  }

  finishIsm(input: IsmFinishInput, signal: AbortSignal): Promise<RunOutput> {
    return this.#turns.finishIsm(input, signal);
  }

  runSubprocesses(input: SubprocessInput, signal: AbortSignal): Promise<SubprocessOutput> {
    return this.#subprocesses.run(input, signal, this.#turns.lastCommitted);
  }

  cancelSubprocesses(): void {
    this.#subprocesses.cancel();
  }

  // ---- RunHost ------------------------------------------------------------------------

  queued(): readonly Perception[] {
    return this.actor.getSnapshot().context.queue.toArray();
  }

  committedSchedules(): Iterable<ScheduledEntry> {
    return this.#schedules.committed();
  }

  committedKv(namespace: string, prefix: (string | number)[]): KvReadEntry[] {
    return this.store.kvRange?.(namespace, prefix) ?? [];
  }

  chunk(proposalId: string, text: string): void {
    // Streamed now, it would reach listeners ahead of earlier speech still waiting for its
    // retry; its final text follows that speech in order anyway.
    if (this.#proposals.waiting) return;
    this.outlet.chunk?.(this.soulId, proposalId, text);
  }

  /** Committed proposals not yet delivered (a failed delivery waits for its retry, and those after it). */
  get undelivered(): number {
    return this.#proposals.undelivered;
  }

  spawnChild<TLogic extends AnyActorLogic>(logic: TLogic, input: InputFrom<TLogic>, id?: string): ActorRefFrom<TLogic> {
    const child = createActor(logic, { parent: this.actor, input, ...(id ? { id } : {}) } as ActorOptions<TLogic>);
    this.#children.add(child);
    child.subscribe({ complete: () => this.#children.delete(child), error: () => this.#children.delete(child) });
    child.start();
    return child as unknown as ActorRefFrom<TLogic>;
  }

  emit(event: SoulEvent): void {
    for (const listener of this.#eventListeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not break the soul it listens to.
      }
    }
  }

  // ---- TurnServices -------------------------------------------------------------------

  now(): number {
    return this.clock.now();
  }

  stopRequested(): boolean {
    const snapshot = this.actor.getSnapshot();
    return snapshot.status !== "active" || snapshot.context.stopping;
  }

  invoke<T>(run: ProcessRun, fn: () => T): T {
    return runWithCognition({ ...(this.#soulCognition ??= soulCognition(this.blueprint, this.#cognition)), signal: run.signal }, () => runInTurn(run, fn));
  }

  review(draft: TurnDraft, perception: Perception): Promise<Proposal[]> {
    return this.#proposals.review(draft, perception);
  }

  async commitDraft(draft: TurnDraft, place: TurnPlace, extra: Pick<TurnCommit, "inboxDone">, proposals: Proposal[]): Promise<SoulState> {
    const createdAt = this.clock.now();
    const outbox: OutboxEntry[] = proposals.map((p) => ({ id: p.id, target: "outlet", payload: p, createdAt }));
    const schedulesPut = [...draft.schedulesPut.values()];
    const schedulesDelete = [...draft.schedulesDelete];
    const kv = [...draft.kvWrites];
    if (extra.inboxDone !== undefined && this.#schedules.has(extra.inboxDone)) schedulesDelete.push(extra.inboxDone);
    const state = await this.#commit(() => {
      // Applied to the state as committed now, so a whisper that landed during the turn is kept.
      const state = draft.applyTo(this.#state, draft.memory, place);
      const commit: TurnCommit = { state: toActorState(state, restingSnapshot(this.machine, state.currentProcess, state.nextParams)) };
      // Decided now, in write order: a held perception demoted meanwhile is in the inbox already.
      const record = extra.inboxDone === undefined ? undefined : this.#held.recordOf(extra.inboxDone);
      if (record) commit.inboxRecord = record;
      else if (extra.inboxDone !== undefined) commit.inboxDone = extra.inboxDone;
      if (outbox.length) commit.outbox = outbox;
      if (schedulesPut.length) commit.schedulesPut = schedulesPut;
      if (schedulesDelete.length) commit.schedulesDelete = schedulesDelete;
      if (kv.length) commit.kv = kv;
      return { state, commit };
    });
    if (extra.inboxDone !== undefined) this.#held.settle(extra.inboxDone);
    this.#schedules.applied(schedulesPut, schedulesDelete);
    if (outbox.length) this.#proposals.deliver(outbox);
    if (draft.expired) this.#expire();
    return state;
  }

  async failPerception(perception: Perception, process: string, error: unknown): Promise<void> {
    const message = (error as Error)?.message ?? String(error);
    this.emit({ type: "error", soulId: this.soulId, phase: "process", message, perceptionId: perception.id, process });
    try {
      // A held perception is not in the inbox yet: the failure is kept there all the same.
      if (this.#held.recordOf(perception.id)) await this.#writes.run(() => this.store.receive(perception.id, perception));
      await this.#writes.run(() => this.store.markError(perception.id, message));
      if (this.#schedules.has(perception.id)) await this.#schedules.delete(perception.id);
      this.#held.settle(perception.id);
    } catch (err) {
      this.#held.release(perception.id, err);
      this.#emitError("commit", err, perception.id);
    }
  }

  emitError(message: string, process: string, perceptionId: string): void {
    this.emit({ type: "error", soulId: this.soulId, phase: "subprocess", message, process, perceptionId });
  }

  emitTransition(from: string, to: string, executeNow: boolean, perceptionId: string, turnId: string): void {
    if (this.#eventListeners.size) this.emit({ type: "transition", soulId: this.soulId, from, to, executeNow, perceptionId, turnId });
  }

  emitTurn(turn: number, process: string, perceptionId: string, startedAt: number, turnId: string): void {
    this.lastActivity = this.clock.now();
    if (this.#eventListeners.size) {
      this.emit({ type: "turn", soulId: this.soulId, turn, process, perceptionId, durationMs: this.clock.now() - startedAt, turnId });
    }
  }

  // ---- internals ----------------------------------------------------------------------

  #commit(build: () => { state: SoulState; commit: TurnCommit }): Promise<SoulState> {
    return this.#writes.run(() => {
      const { state, commit } = build();
      return this.store.commitTurn(commit).then(() => {
        this.#state = state;
        return state;
      });
    });
  }

  #expire(): void {
    this.status = "expired";
    this.emit({ type: "expired", soulId: this.soulId });
    this.#schedules.clear();
    this.actor.send({ type: "STOP" });
    this.#held.releaseAll("it expired");
  }

  #emitError(phase: "commit" | "deliver" | "schedule", err: unknown, perceptionId?: string): void {
    const message = (err as Error)?.message ?? String(err);
    this.emit({ type: "error", soulId: this.soulId, phase, message, ...(perceptionId ? { perceptionId } : {}) });
  }

  #machineFailed(err: unknown): void {
    this.emit({ type: "error", soulId: this.soulId, phase: "process", message: `soul machine failed: ${(err as Error)?.message ?? String(err)}` });
    this.status = "stopped";
    this.#held.releaseAll("its machine failed");
    this.#checkIdle();
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
