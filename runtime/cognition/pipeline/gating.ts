/**
 * The gates that decide, before the call, what a turn's prompt holds and which steps it
 * asks for.
 *
 * ## User model injection: Samantha-Dreams
 *
 * `shouldInjectUserModel` is the reference's `_should_inject_user_model`, read from working
 * memory: inject on the first turn (no conversation yet); otherwise walk the last
 * `memoryWindow` memories backwards to the last mentalQuery about the user model and inject
 * exactly when its `metadata.result` was true; no such check in the window means no.
 *
 * ## The check, and the user-model interval
 *
 * The reference's pipeline asks for `user_model_check` on every turn, and its configuration
 * also has a user-model interval (default 5; in the code it is `USER_MODEL_UPDATE_INTERVAL`).
 * We keep both, with distinct jobs:
 * - `user_model_check` is asked on EVERY turn of a process that lists it. It is the only
 *   signal the injection gate has: skipping it on some turns would leave the gate reading an
 *   older verdict (a `true` from three turns back would keep injecting the model).
 * - the interval is a COOLDOWN on `user_model_update`, the expensive step (a rewrite of the
 *   whole model, and a new stored version): after a turn that saved a rewrite, the update is
 *   left out of the instructions until `userModelInterval` interactions have passed. A check
 *   that reads true during the cooldown still opens the gate, so the next turn shows the
 *   model and the soul can fold the news in once an update is allowed again. Interval 0
 *   means no cooldown. It changes no injection: injection is Samantha-Dreams alone.
 * A process without `user_model_check` (frustrated) gets no check, no update and no model.
 *
 * ## Soul state: every Nth interaction
 *
 * `soul_state_check`/`update` are asked for on interactions N, 2N... (the reference's
 * `count % SOUL_STATE_UPDATE_INTERVAL == 0`), for processes that list them. The count is the
 * thread's, kept in memory (each turn's memories carry their interaction number), not a
 * process-global counter, so two threads do not shift each other's cadence.
 */
import type { Memory } from "../Memory.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import { DEFAULT_PIPELINE_CONFIG, isDue, type PipelineConfig } from "./config.ts";
import { lastInteraction, lastUserModelUpdate } from "./pipelineMemory.ts";
import { resolveProcess, type PipelineProcess } from "./processes.ts";
import type { SoulState } from "./soulState.ts";
import { orderSteps, type PipelineStep } from "./steps.ts";

type MemoryLike = WorkingMemory | readonly Memory[];

function memoriesOf(memory: MemoryLike): readonly Memory[] {
  return Array.isArray(memory) ? (memory as readonly Memory[]) : (memory as WorkingMemory).memories;
}

/** No conversation yet: nothing but system context (a persona a blueprint put there, say). */
export function isFirstTurn(memory: MemoryLike): boolean {
  return !memoriesOf(memory).some((m) => m.role !== "system");
}

/** The reference's `_should_inject_user_model`, over the last `window` memories. */
export function shouldInjectUserModel(memory: MemoryLike, window: number = DEFAULT_PIPELINE_CONFIG.memoryWindow): boolean {
  const memories = memoriesOf(memory);
  if (isFirstTurn(memories)) return true;
  const recent = window > 0 ? memories.slice(-window) : [];
  for (let i = recent.length - 1; i >= 0; i--) {
    const m = recent[i];
    if (m.metadata?.["step"] === "mentalQuery" && m.content.toLowerCase().includes("user model")) {
      return Boolean(m.metadata["result"]);
    }
  }
  return false;
}

/** This turn's interaction number: one past the last turn recorded in memory. */
export function nextInteraction(memory: MemoryLike): number {
  return lastInteraction(memoriesOf(memory)) + 1;
}

export function shouldCheckSoulState(interaction: number, interval: number = DEFAULT_PIPELINE_CONFIG.soulStateInterval): boolean {
  return isDue(interaction, interval);
}

/** Whether the cooldown since the last saved rewrite (if memory holds one) has passed. */
export function userModelUpdateAllowed(
  memory: MemoryLike,
  interaction: number,
  interval: number = DEFAULT_PIPELINE_CONFIG.userModelInterval,
): boolean {
  const last = lastUserModelUpdate(memoriesOf(memory));
  return last === undefined || interval === 0 || interaction - last >= interval;
}

export type UserModelInjectionReason = "firstTurn" | "lastCheckTrue";

export interface TurnPlan {
  interaction: number;
  firstTurn: boolean;
  process: PipelineProcess;
  /** The steps this turn asks for, in pipeline order. */
  steps: PipelineStep[];
  /** Why the user model goes into the prompt, or undefined when it does not. */
  userModelReason?: UserModelInjectionReason;
  soulStateCheck: boolean;
  /** False while the user-model update cooldown runs (or the process has no user-model steps). */
  userModelUpdate: boolean;
}

export interface PlanOptions {
  soulState?: Partial<SoulState>;
  config?: PipelineConfig;
  processes?: Readonly<Record<string, PipelineProcess>>;
  /** Overrides the interaction number read from memory. */
  interaction?: number;
}

/** Everything the gates decide for the next turn on this memory. */
export function planTurn(memory: MemoryLike, options: PlanOptions = {}): TurnPlan {
  const config = options.config ?? DEFAULT_PIPELINE_CONFIG;
  const memories = memoriesOf(memory);
  const interaction = options.interaction ?? nextInteraction(memories);
  const process = resolveProcess(options.soulState?.currentProcess, options.processes);
  const listed = new Set(process.steps);
  const usesUserModel = listed.has("user_model_check");
  const soulStateCheck = listed.has("soul_state_check") && shouldCheckSoulState(interaction, config.soulStateInterval);
  const userModelUpdate =
    usesUserModel && listed.has("user_model_update") && userModelUpdateAllowed(memories, interaction, config.userModelInterval);
  const steps = orderSteps(
    process.steps.filter((s) => {
      if (s === "soul_state_check" || s === "soul_state_update") return soulStateCheck;
      if (s === "user_model_update") return userModelUpdate;
      return true;
    }),
  );
  const firstTurn = isFirstTurn(memories);
  const plan: TurnPlan = { interaction, firstTurn, process, steps, soulStateCheck, userModelUpdate };
  if (usesUserModel) {
    if (firstTurn) plan.userModelReason = "firstTurn";
    else if (shouldInjectUserModel(memories, config.memoryWindow)) plan.userModelReason = "lastCheckTrue";
  }
  return plan;
}
