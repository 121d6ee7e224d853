/**
 * The soul's own state, as the Claudius pipeline keeps it (`SOUL_MEMORY_DEFAULTS`): a few
 * short strings the soul updates itself through `<soul_state_update>` every Nth turn, and
 * which the prompt shows back to it. Only the keys below exist: a model (or a user text the
 * model echoed) cannot grow the state with keys of its own, and `emotionalState` stays one
 * of the five moods the verb mapping and the process router know.
 */
export const EMOTIONAL_STATES = ["neutral", "engaged", "focused", "frustrated", "sardonic"] as const;
export type EmotionalState = (typeof EMOTIONAL_STATES)[number];

export interface SoulState {
  emotionalState: EmotionalState;
  currentTopic: string;
  currentProject: string;
  currentTask: string;
  conversationSummary: string;
  /** The mental process whose step list the next turn uses (see processes.ts). */
  currentProcess: string;
}

export type SoulStateKey = keyof SoulState;

export const SOUL_STATE_DEFAULTS: Readonly<SoulState> = Object.freeze({
  emotionalState: "neutral",
  currentTopic: "",
  currentProject: "",
  currentTask: "",
  conversationSummary: "",
  currentProcess: "main_process",
});

/** In the order the prompt lists them (the reference's order: mood first, then what is going on). */
export const SOUL_STATE_KEYS: readonly SoulStateKey[] = [
  "emotionalState",
  "currentTopic",
  "currentProject",
  "currentTask",
  "conversationSummary",
  "currentProcess",
];

/**
 * The keys whose values may hold a person's words: free text that a blueprint or a model
 * writes (Claudius's Escalate names the task; a `<soul_state_update>` can echo the user). The
 * prompt shows them fenced as untrusted, never in the system prompt (soulStatePrompt.ts). The
 * other two are closed: `emotionalState` is one of five moods, `currentProcess` a process name.
 */
export const SOUL_STATE_TEXT_KEYS = ["currentTopic", "currentProject", "currentTask", "conversationSummary"] as const satisfies readonly SoulStateKey[];

/** A process name as `currentProcess` may hold it: a word, as the router's table keys are. */
export const PROCESS_NAME = /^[A-Za-z][\w-]{0,63}$/;

/** One value's cap: the state is a handful of notes, not a second memory (the reference caps responses the same way). */
export const SOUL_STATE_VALUE_MAX_CHARS = 300;

export function isEmotionalState(value: string): value is EmotionalState {
  return (EMOTIONAL_STATES as readonly string[]).includes(value);
}

function isSoulStateKey(key: string): key is SoulStateKey {
  return (SOUL_STATE_KEYS as readonly string[]).includes(key);
}

/** A full state from a partial one (what a store or soul memory holds), defaults for the rest. */
export function soulStateOf(partial: Partial<Record<string, unknown>> = {}): SoulState {
  const state: SoulState = { ...SOUL_STATE_DEFAULTS };
  applyInto(state, partial);
  return state;
}

export interface SoulStateUpdate {
  /** The state after the update. */
  state: SoulState;
  /** The keys that were accepted, with their new values (unchanged values included). */
  applied: Partial<SoulState>;
  /** Keys that were refused, with why: unknown key, bad emotionalState, bad process name. */
  rejected: Record<string, string>;
}

/**
 * Applies `key: value` pairs from a `<soul_state_update>`: only keys of the defaults are
 * taken, `emotionalState` only when it names one of the five states (any case), values are
 * one line and capped. Everything refused is reported, never silently dropped.
 */
export function applySoulStateUpdate(state: Partial<SoulState>, update: Readonly<Record<string, string>>): SoulStateUpdate {
  const next = soulStateOf(state);
  const applied: Partial<SoulState> = {};
  const rejected: Record<string, string> = {};
  for (const [rawKey, rawValue] of Object.entries(update)) {
    const key = SOUL_STATE_KEYS.find((k) => k.toLowerCase() === rawKey.toLowerCase());
    if (!key) {
      rejected[rawKey] = "not a soul state key";
      continue;
    }
    const value = oneLine(rawValue);
    if (key === "emotionalState") {
      const mood = value.toLowerCase();
      if (!isEmotionalState(mood)) {
        rejected[rawKey] = `emotionalState must be one of ${EMOTIONAL_STATES.join(", ")}`;
        continue;
      }
      next.emotionalState = mood;
      applied.emotionalState = mood;
      continue;
    }
    if (key === "currentProcess" && !PROCESS_NAME.test(value)) {
      rejected[rawKey] = "currentProcess must be a process name";
      continue;
    }
    next[key] = value;
    applied[key] = value;
  }
  return { state: next, applied, rejected };
}

function applyInto(state: SoulState, partial: Partial<Record<string, unknown>>): void {
  for (const [key, value] of Object.entries(partial)) {
    if (!isSoulStateKey(key) || typeof value !== "string") continue;
    if (key === "emotionalState") {
      if (isEmotionalState(value)) state.emotionalState = value;
    } else {
      state[key] = value;
    }
  }
}

/** A value as the state keeps it: one line, capped. */
export function oneLine(value: string): string {
  const flat = value.replace(/\s+/g, " ").trim();
  return flat.length > SOUL_STATE_VALUE_MAX_CHARS ? flat.slice(0, SOUL_STATE_VALUE_MAX_CHARS) : flat;
}
