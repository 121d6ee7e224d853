/**
 * Pipeline processes: which cognitive steps a behavioural mode runs, how it rewords them,
 * and when it hands over to another mode. This is the reference's process router
 * (mental-processes.md, "Extension Blueprint") for the single-call pipeline: the soul's
 * `currentProcess` names the process, an unknown name falls back to `main_process`, and
 * a transition is decided from what the turn's answer set the emotional state to.
 */
import type { EmotionalState } from "./soulState.ts";
import type { InstructionOverrides } from "./instructions.ts";
import type { PipelineStep } from "./steps.ts";

export interface PipelineProcess {
  readonly name: string;
  /** The reference's `COGNITIVE_STEPS`. The periodic soul-state steps still run only every Nth turn. */
  readonly steps: readonly PipelineStep[];
  /** The reference's `INSTRUCTION_OVERRIDES`: a step's description, replaced. */
  readonly instructionOverrides?: InstructionOverrides;
  /** The process to go to after this turn, or undefined to stay. */
  readonly shouldTransition?: (turn: { emotionalState: EmotionalState }) => string | undefined;
}

export const MAIN_PROCESS: PipelineProcess = {
  name: "main_process",
  steps: ["internal_monologue", "external_dialogue", "user_model_check", "user_model_update", "soul_state_check", "soul_state_update"],
  shouldTransition: ({ emotionalState }) => (emotionalState === "frustrated" ? "frustrated" : undefined),
};

/** Shorter answers, sharper verbs, and no user-model work while the soul is frustrated. */
export const FRUSTRATED_PROCESS: PipelineProcess = {
  name: "frustrated",
  steps: ["internal_monologue", "external_dialogue", "soul_state_check", "soul_state_update"],
  instructionOverrides: {
    external_dialogue: "Keep responses to 1-2 sentences. Use verbs: pointed out, corrected, insisted.",
  },
  shouldTransition: ({ emotionalState }) =>
    emotionalState === "neutral" || emotionalState === "engaged" ? "main_process" : undefined,
};

export const DEFAULT_PROCESSES: Readonly<Record<string, PipelineProcess>> = Object.freeze({
  [MAIN_PROCESS.name]: MAIN_PROCESS,
  [FRUSTRATED_PROCESS.name]: FRUSTRATED_PROCESS,
});

/** The named process, or `main_process` when the name is unknown (the reference's `_load_process`). */
export function resolveProcess(
  name: string | undefined,
  processes: Readonly<Record<string, PipelineProcess>> = DEFAULT_PROCESSES,
): PipelineProcess {
  const found = name !== undefined && Object.hasOwn(processes, name) ? processes[name] : undefined;
  return found ?? processes[MAIN_PROCESS.name] ?? MAIN_PROCESS;
}
