import { randomUUID } from "node:crypto";
import type { ScheduledEntry } from "../../runtime/store/index.ts";
import { userModelKey, userModelPrefix, userOfModelKey } from "../../runtime/store/index.ts";
import { USER_MODELS_NAMESPACE, type UserModelVersion } from "../../runtime/store/index.ts";
import type { MentalProcess, ProcessParams, ProcessRef } from "../vocabulary/index.ts";
import type { Perception } from "../vocabulary/index.ts";
import { requireRun, TurnCancelledError, type ProcessRun } from "./ProcessRun.ts";
import { emitEphemeralFrom } from "./sharedHooks.ts";

/**
 * The Open Souls hooks, with their names and meanings. Each finds the running process
 * through AsyncLocalStorage; every write goes to the turn's draft and lands only when the
 * turn commits.
 */

export interface DispatchedAction {
  action: string;
  content?: string;
  name?: string;
  [field: string]: unknown;
}

export interface ScheduledPerception {
  action: string;
  content: string;
  /** Defaults to the soul's own name: a scheduled event is something the soul reminds itself of. */
  name?: string;
  meta?: Record<string, unknown>;
}

export interface ScheduleEventOptions {
  process: ProcessRef;
  perception: ScheduledPerception;
  /** Seconds from now. */
  in?: number;
  when?: Date;
  params?: ProcessParams;
}

export interface SoulActions {
  /** Says something; a stream is forwarded live as chunks and committed as one message. */
  speak(text: string | AsyncIterable<string>): void;
  log(...args: unknown[]): void;
  dispatch(action: DispatchedAction): void;
  /** Returns the event's id, for `cancelScheduledEvent`. */
  scheduleEvent(event: ScheduleEventOptions): string;
  /** Ends the soul once this turn has committed. */
  expire(): void;
  /** Open Souls' shape of `emitEphemeral(type, data)` (sharedHooks.ts): sent now, never stored. */
  emitEphemeral(event: { type: string; data?: unknown }): void;
}

export interface PendingScheduledEvent {
  id: string;
  when: Date;
  process: string;
  perception: unknown;
  params?: ProcessParams;
}

export interface Ref<T> {
  current: T;
}

export interface ReadonlyRef<T> {
  readonly current: T;
}

export interface ProcessManager {
  /** How often the running process has run since the soul entered it (0 the first time). */
  readonly invocationCount: number;
  /** The process the soul was in before this one, compared by identity as in Open Souls. */
  readonly previousMentalProcess: MentalProcess | undefined;
  readonly previousMentalProcessName: string | undefined;
  wait(ms: number): Promise<void>;
  cancelScheduledEvent(id: string): void;
  readonly pendingScheduledEvents: ReadonlyRef<PendingScheduledEvent[]>;
  /** Chooses the next process (a subprocess's way to move the soul); a returned transition wins. */
  setNextProcess(process: ProcessRef, params?: ProcessParams): void;
}

export function useActions(): SoulActions {
  const run = requireRun("useActions");
  const { draft, host } = run;
  const act = (kind: "speak" | "dispatch" | "log", content: string, extra?: Partial<{ action: string; data: Record<string, unknown> }>) => {
    run.assertLive();
    const seq = draft.nextSeq();
    const action = { seq, kind, content, ts: host.clock.now(), ...extra };
    draft.actions.push(action);
    return action;
  };
  return {
    speak(text) {
      if (typeof text === "string") {
        act("speak", text);
        return;
      }
      const action = act("speak", "");
      const proposalId = `${draft.turnId}:${action.seq}`;
      const streamed = (async () => {
        for await (const chunk of text) {
          if (run.signal.aborted) throw new TurnCancelledError(`speech of '${run.process}'`);
          action.content += chunk;
          host.chunk(proposalId, chunk);
        }
      })();
      // The turn awaits it before committing; a turn that fails first must not leave it unhandled.
      streamed.catch(() => undefined);
      draft.streams.push(streamed);
    },
    log(...args) {
      act("log", args.map((a) => (typeof a === "string" ? a : safeJson(a))).join(" "));
    },
    dispatch({ action, content, ...data }) {
      if (typeof action !== "string" || action === "") throw new Error("dispatch() needs an action name");
      act("dispatch", content ?? "", { action, ...(Object.keys(data).length ? { data } : {}) });
    },
    scheduleEvent(event) {
      run.assertLive();
      const process = host.blueprint.nameOf(event.process);
      if (process === undefined) {
        throw new Error(`scheduleEvent(): ${describeRef(event.process)} is not a process of soul '${host.blueprint.name}'`);
      }
      const at = event.when ? event.when.getTime() : host.clock.now() + (event.in ?? 0) * 1000;
      if (!Number.isFinite(at)) throw new Error("scheduleEvent(): give `in` (seconds) or a valid `when` date");
      const perception: Omit<Perception, "id" | "ts"> = {
        action: event.perception.action,
        content: event.perception.content,
        name: event.perception.name ?? host.blueprint.name,
        internal: true,
        process,
        ...(event.params ? { params: event.params } : {}),
        ...(event.perception.meta ? { meta: event.perception.meta } : {}),
      };
      const entry: ScheduledEntry = { id: randomUUID(), at, process, perception };
      if (event.params) entry.params = event.params;
      draft.putSchedule(entry);
      return entry.id;
    },
    expire() {
      run.assertLive();
      draft.expired = true;
    },
    emitEphemeral(event) {
      emitEphemeralFrom(run, "useActions().emitEphemeral()", event?.type, event?.data);
    },
  };
}

export function usePerceptions(): {
  invokingPerception: Perception;
  pendingPerceptions: ReadonlyRef<readonly Perception[]>;
} {
  const run = requireRun("usePerceptions");
  return {
    invokingPerception: run.perception,
    pendingPerceptions: {
      get current() {
        return run.pendingPerceptions();
      },
    },
  };
}

export function useProcessManager(): ProcessManager {
  const run = requireRun("useProcessManager");
  const { draft, host } = run;
  const previous = run.previousProcess;
  return {
    invocationCount: run.invocationCount,
    previousMentalProcess: previous === undefined ? undefined : host.blueprint.processes.get(previous)?.process,
    previousMentalProcessName: previous,
    wait: (ms) => wait(run, ms),
    cancelScheduledEvent(id) {
      run.assertLive();
      draft.cancelSchedule(id);
    },
    pendingScheduledEvents: {
      get current() {
        const entries = new Map<string, ScheduledEntry>();
        for (const entry of host.committedSchedules()) entries.set(entry.id, entry);
        for (const id of draft.schedulesDelete) entries.delete(id);
        for (const [id, entry] of draft.schedulesPut) entries.set(id, entry);
        return [...entries.values()]
          .sort((a, b) => a.at - b.at)
          .map((e) => ({ id: e.id, when: new Date(e.at), process: e.process, perception: e.perception, ...(e.params ? { params: e.params } : {}) }));
      },
    },
    setNextProcess(process, params) {
      run.assertLive();
      const name = host.blueprint.nameOf(process);
      if (name === undefined) throw new Error(`setNextProcess(): ${describeRef(process)} is not a process of soul '${host.blueprint.name}'`);
      draft.nextProcess = { name, params: params ?? null };
    },
  };
}

/** State kept for the running process across its invocations; reset when the soul switches process. */
export function useProcessMemory<T>(initial: T): Ref<T> {
  const run = requireRun("useProcessMemory");
  const index = run.slot++;
  const slots = run.draft.writableSlots(run.memoryKey);
  while (slots.length < index) slots.push(undefined);
  // A private copy, so editing the value in place cannot reach the committed state.
  slots[index] = isolate(index < slots.length ? slots[index] : initial);
  return {
    get current() {
      return slots[index] as T;
    },
    set current(value: T) {
      run.assertLive();
      slots[index] = value;
    },
  };
}

/**
 * State kept for the whole soul, by name, across processes and restarts.
 *
 * Reading is not writing: the turn gets a private copy of an object value, and at commit the
 * key is written back only if the turn assigned it (`ref.current = ...`) or changed the copy
 * in place (compared structurally with the value it was copied from). A key the turn only
 * read keeps whatever it holds at commit, so a value that changed while the turn ran (a
 * whisper that arrived) is not overwritten with the turn's stale copy. The initial value of
 * a key the soul does not have is stored if the key is still absent at commit.
 */
export function useSoulMemory<T>(name: string, initial?: T): Ref<T> {
  const run = requireRun("useSoulMemory");
  const { draft } = run;
  if (!draft.ownsSoulMemory(name)) {
    if (!draft.hasSoulMemory(name)) draft.trackSoulMemoryRead(name, isolate(initial), initial, true);
    else {
      const value = draft.readSoulMemory(name);
      // A primitive cannot be edited in place: reads of it stay live, and nothing is tracked.
      if (typeof value === "object" && value !== null) draft.trackSoulMemoryRead(name, isolate(value), value, false);
    }
  }
  return {
    get current() {
      return draft.readSoulMemory(name) as T;
    },
    set current(value: T) {
      run.assertLive();
      draft.setSoulMemory(name, value);
    },
  };
}

/** A soul's versioned models of the people it talks to, as `useUserModels()` gives them to a process. */
export interface UserModelsHook {
  /** The newest version: the turn's own pending save if it made one, else the committed one. */
  latest(userId: string): UserModelVersion | undefined;
  /** Every version, oldest first, the turn's pending saves included. */
  history(userId: string): UserModelVersion[];
  /**
   * Buffers a new version in the turn: it is committed in the turn's own transaction (so a
   * turn that throws saves nothing) under the same keys as runtime/store `userModels()`.
   */
  save(userId: string, markdown: string, changeNote: string): UserModelVersion;
}

const USER_ID_MAX = 256;

/**
 * The soul's user models (markdown per person, versioned, each version with its change
 * note), kept in the soul's store under `userModels` and written atomically with the turn.
 */
export function useUserModels(): UserModelsHook {
  const run = requireRun("useUserModels");
  const { draft, host } = run;
  const check = (userId: string): string => {
    if (typeof userId !== "string" || userId.trim() === "" || userId.length > USER_ID_MAX) {
      throw new Error(`useUserModels(): invalid user id ${JSON.stringify(userId)}: must be a non-empty string of at most ${USER_ID_MAX} characters`);
    }
    return userId;
  };
  const history = (userId: string): UserModelVersion[] => {
    const id = check(userId);
    const versions = new Map<number, UserModelVersion>();
    for (const entry of host.committedKv(USER_MODELS_NAMESPACE, userModelPrefix(id))) {
      const v = entry.value as UserModelVersion;
      versions.set(v.version, v);
    }
    for (const write of draft.pendingKv(USER_MODELS_NAMESPACE)) {
      if (userOfModelKey(write.key) !== id) continue;
      const v = write.value as UserModelVersion;
      versions.set(v.version, v);
    }
    return [...versions.values()].sort((a, b) => a.version - b.version);
  };
  return {
    latest: (userId) => history(userId).at(-1),
    history,
    save(userId, markdown, changeNote) {
      run.assertLive();
      const id = check(userId);
      if (typeof markdown !== "string" || markdown.trim() === "") throw new Error(`useUserModels(): refusing to save an empty model of ${id}`);
      const version: UserModelVersion = {
        version: (history(id).at(-1)?.version ?? 0) + 1,
        markdown: markdown.trim(),
        changeNote: String(changeNote ?? "").replace(/\s+/g, " ").trim(),
        ts: host.clock.now(),
      };
      draft.kvWrites.push({ namespace: USER_MODELS_NAMESPACE, key: userModelKey(id, version.version), value: version });
      return version;
    },
  };
}

function wait(run: ProcessRun, ms: number): Promise<void> {
  const { clock } = run.host;
  return new Promise<void>((resolve, reject) => {
    if (run.signal.aborted) return reject(new TurnCancelledError(`${run.kind} '${run.process}'`));
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(new TurnCancelledError(`${run.kind} '${run.process}'`));
    };
    const handle = clock.setTimeout(() => {
      run.signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    run.signal.addEventListener("abort", onAbort, { once: true });
  });
}

function isolate<T>(value: T): T {
  return typeof value === "object" && value !== null ? structuredClone(value) : value;
}

function describeRef(ref: ProcessRef): string {
  return typeof ref === "string" ? `'${ref}'` : `function ${ref.name || "(anonymous)"}`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
