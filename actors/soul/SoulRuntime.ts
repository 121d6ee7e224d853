import { createActor, type Actor, type ActorOptions, type ActorRefFrom, type AnyActorLogic, type AnyActorRef, type InputFrom } from "xstate";
import { runWithCognition, type CognitionContext } from "../../runtime/cognition/index.ts";
import { atFaultPoint } from "../../runtime/faults/index.ts";
import { type ActorStore, type KvReadEntry, type ScheduledEntry, type TurnCommit } from "../../runtime/store/index.ts";
import type { IsmMachineInput } from "../ism/index.ts";
import { runInTurn, type Outlet, type Perception, type PerceptionInput, type Proposal } from "../vocabulary/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import { FailedPerceptions } from "./FailedPerceptions.ts";
import { turnFailureOf } from "./FailedTurn.ts";
import { HeldPerceptions } from "./HeldPerceptions.ts";
import type { ProcessRun, RunHost } from "./ProcessRun.ts";
import { ProposalFlow } from "./ProposalFlow.ts";
import { restingSnapshot } from "./restingSnapshot.ts";
import type { Clock } from "./scheduler.ts";
import { autonomousWork, soulCognition } from "./soulCognition.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import { SoulEventFanout } from "./SoulEventFanout.ts";
import { SoulIntake, type HeldPerceiveResult, type PerceiveResult } from "./SoulIntake.ts";
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
import { SoulSchedules } from "./SoulSchedules.ts";
import { NO_SERVICES, type SoulServices } from "./SoulServices.ts";
import { pruneToolCalls } from "./toolCallPruning.ts";
import { restoreSoulState, type SoulState } from "./SoulState.ts";
import type { SoulStatus } from "./SoulStatus.ts";
import { SoulWhispers } from "./SoulWhispers.ts";
import { SoulWrites } from "./SoulWrites.ts";
import { SubprocessPhase, type SubprocessServices } from "./SubprocessPhase.ts";
import type { TurnDraft } from "./TurnDraft.ts";
import { draftWrites, turnCommitOf, whisperCommit } from "./turnCommit.ts";
import { TurnRunner, type TurnPlace } from "./TurnRunner.ts";
import { turnToolBox } from "./turnTools.ts";

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
  /** What the soul's hooks reach beyond the soul (tools, stores, shared contexts). */
  services?: SoulServices;
}

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
  /** Turns are traced when the store keeps a turn log: nobody could read the trace otherwise. */
  readonly tracing: boolean;
  readonly services: SoulServices;
  status: SoulStatus = "active";
  lastActivity: number;

  #state: SoulState;
  readonly #cognition: CognitionContext | undefined;
  #soulCognition: CognitionContext | undefined;
  readonly #turns: TurnRunner;
  readonly #subprocesses: SubprocessPhase;
  readonly #children = new Set<AnyActorRef>();
  readonly #events: SoulEventFanout;
  readonly #proposals: ProposalFlow;
  readonly #held: HeldPerceptions;
  readonly #intake: SoulIntake;
  readonly #writes: SoulWrites;
  readonly #schedules: SoulSchedules;
  readonly #whispers: SoulWhispers;
  readonly #failed: FailedPerceptions;
  #idleWaiters: (() => void)[] = [];
  /** Perceptions on their way into the inbox, deliveries and commits not yet settled. */
  #busy = 0;

  constructor(options: SoulRuntimeOptions) {
    this.soulId = options.id;
    this.blueprint = options.blueprint;
    this.clock = options.clock;
    this.store = options.store;
    this.outlet = options.outlet;
    this.tracing = options.store.history !== undefined;
    this.services = options.services ?? NO_SERVICES;
    this.#cognition = options.cognition;
    this.#events = new SoulEventFanout(this.soulId);
    if (options.onEvent) this.#events.listen(options.onEvent);
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
    this.#failed = this.#failedPerceptions();
    this.#schedules = new SoulSchedules({
      soulId: this.soulId,
      blueprintName: this.blueprint.name,
      clock: this.clock,
      store: this.store,
      writes: this.#writes,
      perceive: (input) => this.#intake.perceive(input, { own: true }),
      emit: (event) => this.emit(event),
      failed: (err, id) => this.#events.failed("schedule", err, id),
    });

    this.#whispers = new SoulWhispers({
      soulId: this.soulId,
      send: (content, source) => this.actor.send({ type: "WHISPER", content, source }),
      store: (whisper) => this.#commit(() => whisperCommit(this.#state, this.machine, whisper)),
      emit: (event) => this.emit(event),
      commitFailed: (err) => this.#events.failed("commit", err),
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

  /** Where a perception whose turn failed is set aside (FailedPerceptions.ts). */
  #failedPerceptions(): FailedPerceptions {
    return new FailedPerceptions({
      soulId: this.soulId,
      store: this.store,
      clock: this.clock,
      writes: this.#writes,
      held: this.#held,
      intake: this.#intake,
      schedules: { has: (id) => this.#schedules.has(id), delete: (id) => this.#schedules.delete(id) },
      emit: (event) => this.emit(event),
      failed: (err, id) => this.#events.failed("commit", err, id),
      stopping: () => this.stopRequested() || this.status !== "active",
      setAside: () => pruneToolCalls(this, this.#state.turn + 1),
    });
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

  /** The machine hands a whisper here (SoulWhispers.take). */
  whisper(content: string, source: string): void {
    this.#whispers.take(content, source);
  }

  /** Resolves once the whisper is stored (SoulWhispers.keep). */
  keepWhisper(content: string, source: string): Promise<void> {
    return this.#whispers.keep(content, source);
  }

  /** Resolves once every write of the soul so far is durable (a whisper, a commit). */
  flushed(): Promise<void> {
    return this.#writes.flushed();
  }

  onEvent(listener: (event: SoulEvent) => void): () => void {
    return this.#events.listen(listener);
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
    this.#intake.releaseUnwritten();
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
    this.#events.emit(event);
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
    const work = autonomousWork(run);
    const trace = run.draft.trace;
    const tools = turnToolBox(this, run);
    const cognition = {
      ...(this.#soulCognition ??= soulCognition(this.blueprint, this.#cognition)),
      signal: run.signal,
      ...(work ? { work } : {}),
      ...(trace ? { onStep: trace.step } : {}),
      ...(tools ? { tools } : {}),
    };
    return runWithCognition(cognition, () => runInTurn(run, fn));
  }

  review(draft: TurnDraft, perception: Perception): Promise<Proposal[]> {
    return this.#proposals.review(draft, perception);
  }

  async commitDraft(draft: TurnDraft, place: TurnPlace, extra: Pick<TurnCommit, "inboxDone">, proposals: Proposal[]): Promise<SoulState> {
    const done = extra.inboxDone;
    const now = this.clock.now();
    const writes = draftWrites(draft, proposals, now);
    if (done !== undefined && this.#schedules.has(done)) writes.schedulesDelete.push(done);
    const state = await this.#commit(() => {
      // Applied to the state as committed now, so a whisper that landed during the turn is kept.
      const state = draft.applyTo(this.#state, draft.memory, place);
      // Decided now, in write order: a held perception demoted meanwhile is in the inbox already.
      const record = done === undefined ? undefined : (this.#held.recordOf(done) ?? this.#intake.unconfirmed(done));
      const commit = turnCommitOf(state, this.machine, writes, { record, done });
      if (draft.trace) commit.log = { kind: done === undefined ? "subprocess" : "turn", at: now, trace: draft.trace.toStored(this.clock.now()) };
      return { state, commit };
    });
    pruneToolCalls(this, state.turn);
    if (done !== undefined) (this.#held.settle(done), this.#intake.turnEnded(done));
    this.#schedules.applied(writes.schedulesPut, writes.schedulesDelete);
    if (writes.outbox.length) this.#proposals.deliver(writes.outbox);
    if (draft.expired) this.#expire();
    return state;
  }

  failPerception(perception: Perception, process: string, error: unknown, turnId?: string): Promise<void> {
    return this.#failed.fail(perception, process, error, turnId);
  }

  emitError(error: unknown, process: string, perceptionId: string, turnId?: string): void {
    this.emit({ type: "error", soulId: this.soulId, phase: "subprocess", ...turnFailureOf(error), process, perceptionId, ...(turnId !== undefined ? { turnId } : {}) });
  }

  emitTransition(from: string, to: string, executeNow: boolean, perceptionId: string, turnId: string): void {
    if (this.#events.heard) this.emit({ type: "transition", soulId: this.soulId, from, to, executeNow, perceptionId, turnId });
  }

  emitTurn(turn: number, process: string, perceptionId: string, startedAt: number, turnId: string): void {
    this.lastActivity = this.clock.now();
    if (this.#events.heard) {
      this.emit({ type: "turn", soulId: this.soulId, turn, process, perceptionId, durationMs: this.clock.now() - startedAt, turnId });
    }
  }

  // ---- internals ----------------------------------------------------------------------

  #commit(build: () => { state: SoulState; commit: TurnCommit }): Promise<SoulState> {
    return this.#writes.run(() => {
      const { state, commit } = build();
      const perceptionId = commit.inboxRecord?.id ?? commit.inboxDone;
      const detail = { soulId: this.soulId, turn: state.turn, ...(perceptionId !== undefined ? { perceptionId } : {}) };
      return atFaultPoint("turn.commit", () => this.store.commitTurn(commit), detail).then(() => {
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
