import type { WorkingMemory } from "../../runtime/cognition/WorkingMemory.ts";
import type { ScheduledEntry } from "../../runtime/store/types.ts";
import type { ProcessParams } from "./MentalProcess.ts";
import type { ProposalKind } from "./Proposal.ts";
import type { SoulState } from "./SoulState.ts";

/** An action taken during a turn, held until the turn commits. */
export interface DraftAction {
  seq: number;
  kind: ProposalKind;
  content: string;
  action?: string;
  data?: Record<string, unknown>;
  ts: number;
}

/**
 * Everything a turn writes, buffered until it commits: hooks write here, never to the
 * committed state, so a turn that throws (or a cancelled subprocess) leaves no trace. A
 * subprocess writes to a fork that is merged only when it succeeds.
 */
export class TurnDraft {
  memory: WorkingMemory;
  readonly turnId: string;
  readonly actions: DraftAction[] = [];
  readonly schedulesPut = new Map<string, ScheduledEntry>();
  readonly schedulesDelete = new Set<string>();
  /** Streamed speech still arriving; the turn waits for it before it commits. */
  readonly streams: Promise<void>[] = [];
  expired = false;
  /** `setNextProcess`: wins over a bare-memory return. */
  nextProcess?: { name: string; params: ProcessParams | null };

  readonly #base: () => SoulState;
  readonly #parent?: TurnDraft;
  readonly #seq: { next: number };
  #soulMemory?: Map<string, unknown>;
  #processMemory?: Map<string, unknown[]>;
  #counts?: Map<string, number>;

  constructor(base: () => SoulState, turnId: string, memory: WorkingMemory, parent?: TurnDraft) {
    this.#base = base;
    this.turnId = turnId;
    this.memory = memory;
    this.#parent = parent;
    this.#seq = parent ? parent.#seq : { next: 0 };
  }

  nextSeq(): number {
    return this.#seq.next++;
  }

  /** A draft over this one, for a subprocess: merged back only if the subprocess succeeds. */
  fork(): TurnDraft {
    return new TurnDraft(this.#base, this.turnId, this.memory, this);
  }

  merge(child: TurnDraft): void {
    this.memory = child.memory;
    for (const [k, v] of child.#soulMemory ?? []) this.setSoulMemory(k, v);
    for (const [k, v] of child.#processMemory ?? []) (this.#processMemory ??= new Map()).set(k, v);
    for (const [k, v] of child.#counts ?? []) (this.#counts ??= new Map()).set(k, v);
    this.actions.push(...child.actions);
    for (const [id, entry] of child.schedulesPut) this.schedulesPut.set(id, entry);
    for (const id of child.schedulesDelete) this.cancelSchedule(id);
    this.expired ||= child.expired;
    if (child.nextProcess) this.nextProcess = child.nextProcess;
  }

  ownsSoulMemory(name: string): boolean {
    return this.#soulMemory?.has(name) ?? false;
  }

  hasSoulMemory(name: string): boolean {
    if (this.#soulMemory?.has(name)) return true;
    return this.#parent ? this.#parent.hasSoulMemory(name) : Object.hasOwn(this.#base().soulMemory, name);
  }

  readSoulMemory(name: string): unknown {
    if (this.#soulMemory?.has(name)) return this.#soulMemory.get(name);
    return this.#parent ? this.#parent.readSoulMemory(name) : this.#base().soulMemory[name];
  }

  setSoulMemory(name: string, value: unknown): void {
    (this.#soulMemory ??= new Map()).set(name, value);
  }

  ownsProcessMemory(process: string): boolean {
    return this.#processMemory?.has(process) ?? false;
  }

  processSlots(process: string): readonly unknown[] {
    const own = this.#processMemory?.get(process);
    if (own) return own;
    return this.#parent ? this.#parent.processSlots(process) : (this.#base().processMemory[process] ?? []);
  }

  /** The process's slots as this draft's own copy, ready to write. */
  writableSlots(process: string): unknown[] {
    let own = this.#processMemory?.get(process);
    if (!own) {
      own = [...this.processSlots(process)];
      (this.#processMemory ??= new Map()).set(process, own);
    }
    return own;
  }

  invocationCount(process: string): number {
    const own = this.#counts?.get(process);
    if (own !== undefined) return own;
    return this.#parent ? this.#parent.invocationCount(process) : (this.#base().invocationCounts[process] ?? 0);
  }

  countInvocation(process: string): void {
    (this.#counts ??= new Map()).set(process, this.invocationCount(process) + 1);
  }

  /** Entering a process from another one starts it afresh: Open Souls resets both. */
  resetProcess(process: string): void {
    (this.#processMemory ??= new Map()).set(process, []);
    (this.#counts ??= new Map()).set(process, 0);
  }

  putSchedule(entry: ScheduledEntry): void {
    this.schedulesPut.set(entry.id, entry);
  }

  cancelSchedule(id: string): void {
    if (!this.schedulesPut.delete(id)) this.schedulesDelete.add(id);
  }

  /** True when the subprocess phase has anything worth a commit. */
  hasWrites(since: WorkingMemory): boolean {
    return (
      this.memory !== since ||
      (this.#soulMemory?.size ?? 0) > 0 ||
      (this.#processMemory?.size ?? 0) > 0 ||
      (this.#counts?.size ?? 0) > 0 ||
      this.actions.length > 0 ||
      this.schedulesPut.size > 0 ||
      this.schedulesDelete.size > 0 ||
      this.expired ||
      this.nextProcess !== undefined
    );
  }

  /** The committed state with this draft's writes: the state its commit will store. */
  applyTo(
    base: SoulState,
    memory: WorkingMemory,
    place: Pick<SoulState, "currentProcess" | "previousProcess" | "turn" | "nextParams">,
  ): SoulState {
    const soulMemory = this.#soulMemory ? { ...base.soulMemory, ...Object.fromEntries(this.#soulMemory) } : base.soulMemory;
    const processMemory = this.#processMemory
      ? { ...base.processMemory, ...Object.fromEntries(this.#processMemory) }
      : base.processMemory;
    const invocationCounts = this.#counts
      ? { ...base.invocationCounts, ...Object.fromEntries(this.#counts) }
      : base.invocationCounts;
    const metadata = this.expired ? { ...base.metadata, expired: true } : base.metadata;
    const next: SoulState = {
      memory,
      soulMemory,
      processMemory,
      invocationCounts,
      metadata,
      currentProcess: place.currentProcess,
      turn: place.turn,
      nextParams: place.nextParams,
    };
    return place.previousProcess === undefined ? next : { ...next, previousProcess: place.previousProcess };
  }
}
