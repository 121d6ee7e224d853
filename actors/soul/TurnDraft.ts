import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { KvWrite, ScheduledEntry } from "../../runtime/store/index.ts";
import type { ProcessParams } from "../vocabulary/index.ts";
import type { ProposalKind } from "../vocabulary/index.ts";
import type { SoulState } from "./SoulState.ts";
import type { TurnTrace } from "./TurnTrace.ts";

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
 * A soul-memory value a turn has read but not assigned: `useSoulMemory` hands the turn a
 * private copy of an object (so an in-place edit cannot reach the committed state before the
 * turn commits), or the initial value of a key the soul does not have yet.
 */
interface SoulMemoryRead {
  /** What the turn sees and may edit in place. */
  value: unknown;
  /** The value it was copied from (never handed to the turn, so never edited). */
  seen: unknown;
  /** The key was not in soul memory when read: `value` is the hook's initial value. */
  absent: boolean;
}

/** A soul-memory value to clear at commit if it is still the one the turn saw. */
interface SoulMemoryConsumption {
  name: string;
  expected: unknown;
}

/**
 * Everything a turn writes, buffered until it commits: hooks write here, never to the
 * committed state, so a turn that throws (or a cancelled subprocess) leaves no trace. A
 * subprocess writes to a fork that is merged only when it succeeds.
 *
 * Soul memory is merged key by key into the state as committed at the end of the turn, so a
 * value written meanwhile (a whisper) is kept unless the turn itself changed that key:
 * - a key the turn assigned (`ref.current = ...`) is written;
 * - a key the turn only read is written only if the turn edited its copy in place (the copy
 *   differs, structurally, from the value it was copied from); an unchanged copy is dropped;
 * - a key that was absent when read gets the hook's initial value (as edited) only if it is
 *   still absent at commit, or if the turn edited it;
 * - a consumption (`consumeSoulMemory`) clears a key to null only if the committed value is
 *   still, by identity, the one the turn consumed and the turn wrote nothing to that key.
 */
export class TurnDraft {
  memory: WorkingMemory;
  readonly turnId: string;
  readonly actions: DraftAction[] = [];
  readonly schedulesPut = new Map<string, ScheduledEntry>();
  readonly schedulesDelete = new Set<string>();
  /** Key/value writes (user-model versions...), committed in the turn's transaction. */
  readonly kvWrites: KvWrite[] = [];
  /** Streamed speech still arriving; the turn waits for it before it commits. */
  readonly streams: Promise<void>[] = [];
  expired = false;
  /** What the turn log keeps of this turn, when the soul's store keeps one. */
  trace?: TurnTrace;
  /** `setNextProcess`: wins over a bare-memory return. */
  nextProcess?: { name: string; params: ProcessParams | null };

  readonly #base: () => SoulState;
  readonly #parent?: TurnDraft;
  readonly #seq: { next: number };
  /** Soul-memory keys the turn assigned. */
  #soulMemory?: Map<string, unknown>;
  /** Soul-memory keys the turn read (and holds a copy of) without assigning them. */
  #soulReads?: Map<string, SoulMemoryRead>;
  #consumptions?: SoulMemoryConsumption[];
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

  /** The draft of the whole turn or phase: a fork's parent's, all the way up. */
  get root(): TurnDraft {
    return this.#parent ? this.#parent.root : this;
  }

  /** A draft over this one, for a subprocess: merged back only if the subprocess succeeds. */
  fork(): TurnDraft {
    const child = new TurnDraft(this.#base, this.turnId, this.memory, this);
    // One trace for the phase: a fork that fails keeps its steps there, as what was tried.
    if (this.trace) child.trace = this.trace;
    return child;
  }

  merge(child: TurnDraft): void {
    this.memory = child.memory;
    for (const [k, v] of child.#soulMemory ?? []) this.setSoulMemory(k, v);
    for (const [k, read] of child.#soulReads ?? []) {
      // The child copied this draft's own value: its edit, if any, is a write here.
      if (this.ownsSoulMemory(k)) {
        if (!sameValue(read.value, read.seen)) this.setSoulMemory(k, read.value);
      } else (this.#soulReads ??= new Map()).set(k, read);
    }
    for (const c of child.#consumptions ?? []) (this.#consumptions ??= []).push(c);
    for (const [k, v] of child.#processMemory ?? []) (this.#processMemory ??= new Map()).set(k, v);
    for (const [k, v] of child.#counts ?? []) (this.#counts ??= new Map()).set(k, v);
    this.actions.push(...child.actions);
    for (const [id, entry] of child.schedulesPut) this.schedulesPut.set(id, entry);
    for (const id of child.schedulesDelete) this.cancelSchedule(id);
    this.kvWrites.push(...child.kvWrites);
    this.expired ||= child.expired;
    if (child.nextProcess) this.nextProcess = child.nextProcess;
  }

  /** The draft holds its own value for the key: assigned, or read into a private copy. */
  ownsSoulMemory(name: string): boolean {
    return (this.#soulMemory?.has(name) ?? false) || (this.#soulReads?.has(name) ?? false);
  }

  /** The turn assigned the key (here or in a merged subprocess). */
  assignedSoulMemory(name: string): boolean {
    return this.#soulMemory?.has(name) ?? false;
  }

  hasSoulMemory(name: string): boolean {
    if (this.ownsSoulMemory(name)) return true;
    return this.#parent ? this.#parent.hasSoulMemory(name) : Object.hasOwn(this.#base().soulMemory, name);
  }

  readSoulMemory(name: string): unknown {
    if (this.#soulMemory?.has(name)) return this.#soulMemory.get(name);
    const read = this.#soulReads?.get(name);
    if (read) return read.value;
    return this.#parent ? this.#parent.readSoulMemory(name) : this.#base().soulMemory[name];
  }

  /** An assignment: written at commit whatever the key holds by then. */
  setSoulMemory(name: string, value: unknown): void {
    this.#soulReads?.delete(name);
    (this.#soulMemory ??= new Map()).set(name, value);
  }

  /**
   * A read: the turn works on `value` (a private copy of `seen`, or the initial value of an
   * absent key), which is written at commit only if the turn changed it (see the class doc).
   */
  trackSoulMemoryRead(name: string, value: unknown, seen: unknown, absent: boolean): void {
    (this.#soulReads ??= new Map()).set(name, { value, seen, absent });
  }

  /** Clears the key to null at commit, if it still holds `expected` (by identity) and the turn did not write it. */
  consumeSoulMemory(name: string, expected: unknown): void {
    (this.#consumptions ??= []).push({ name, expected });
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

  /** This draft's pending key/value writes and those of the drafts it was forked from, oldest first. */
  pendingKv(namespace: string): KvWrite[] {
    const own = this.kvWrites.filter((w) => w.namespace === namespace);
    return this.#parent ? [...this.#parent.pendingKv(namespace), ...own] : own;
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
      this.#readsWrite() ||
      (this.#consumptions?.length ?? 0) > 0 ||
      (this.#processMemory?.size ?? 0) > 0 ||
      (this.#counts?.size ?? 0) > 0 ||
      this.actions.length > 0 ||
      this.schedulesPut.size > 0 ||
      this.schedulesDelete.size > 0 ||
      this.kvWrites.length > 0 ||
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
    const soulMemory = this.#soulMemory || this.#soulReads || this.#consumptions ? this.#soulMemoryOver(base.soulMemory) : base.soulMemory;
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

  /** Whether any read would be written if the key were still as it was (for `hasWrites`). */
  #readsWrite(): boolean {
    for (const read of this.#soulReads?.values() ?? []) if (read.absent || !sameValue(read.value, read.seen)) return true;
    return false;
  }

  #soulMemoryOver(base: Readonly<Record<string, unknown>>): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    const written = new Set<string>();
    const write = (name: string, value: unknown) => {
      (out ??= { ...base })[name] = value;
      written.add(name);
    };
    for (const [name, value] of this.#soulMemory ?? []) write(name, value);
    for (const [name, read] of this.#soulReads ?? []) {
      if (!sameValue(read.value, read.seen)) write(name, read.value);
      else if (read.absent && !Object.hasOwn(base, name)) write(name, read.value);
    }
    for (const { name, expected } of this.#consumptions ?? []) {
      if (!written.has(name) && Object.hasOwn(base, name) && base[name] === expected) write(name, null);
    }
    return out ?? (base as Record<string, unknown>);
  }
}

/**
 * Structural equality for soul-memory values (what structuredClone and msgpack carry): a
 * copy the turn left alone equals its original. Prototypes are not compared, since a clone
 * of a class instance is a plain object; anything it cannot compare counts as changed.
 */
export function sameValue(a: unknown, b: unknown, pairs?: Map<object, object>): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  // Cycles (structuredClone keeps them): a pair already being compared is assumed equal.
  if (pairs?.get(a) === b) return true;
  (pairs ??= new Map()).set(a, b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i], pairs)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  if (a instanceof RegExp || b instanceof RegExp) return a instanceof RegExp && b instanceof RegExp && a.source === b.source && a.flags === b.flags;
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    const right = [...b];
    let i = 0;
    for (const [k, v] of a) {
      const [rk, rv] = right[i++] as [unknown, unknown];
      if (!sameValue(k, rk, pairs) || !sameValue(v, rv, pairs)) return false;
    }
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false;
    const right = [...b];
    let i = 0;
    for (const v of a) if (!sameValue(v, right[i++], pairs)) return false;
    return true;
  }
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b) || a instanceof ArrayBuffer || b instanceof ArrayBuffer) return sameBytes(a, b);
  if (isBoxed(a) || isBoxed(b)) return isBoxed(a) && isBoxed(b) && Object.is(a.valueOf(), b.valueOf());
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], pairs)) return false;
  }
  return true;
}

function isBoxed(value: object): value is Number | String | Boolean {
  return value instanceof Number || value instanceof String || value instanceof Boolean;
}

function bytesOf(value: object): Uint8Array | undefined {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}

function sameBytes(a: object, b: object): boolean {
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const x = bytesOf(a);
  const y = bytesOf(b);
  if (!x || !y || x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
