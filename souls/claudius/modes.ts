/**
 * Claudius's behavioural modes as the single-call pipeline knows them: which cognitive steps
 * each mode asks for, how it rewords them (the reference's `COGNITIVE_STEPS` and
 * `INSTRUCTION_OVERRIDES`, mental-processes.md), and the emotional-state transitions the
 * pipeline judges from the turn's own `<soul_state_update>`.
 *
 * Each mode is keyed by the name the pipeline's process router uses (`currentProcess` in the
 * soul state). `main` is `main_process` there, the reference's name and the soul state's
 * default, so the `## Soul State` section only mentions the process when it is not the usual one.
 */
import {
  DEFAULT_STEP_INSTRUCTIONS,
  MAIN_PROCESS,
  type PipelineConfig,
  type PipelineProcess,
} from "../../runtime/cognition/index.ts";
import { ESCALATED_TASK, OPEN_PROBLEM_MARKER, TASK_COMPLETE_MARKER } from "./signals.ts";

/** The soul machine's names for the processes that run the pipeline. */
export type PipelineProcessName = "greeting" | "main" | "frustrated" | "deepWork";

/** The soul machine's name for the ISM phase. */
export const PROBLEM_SOLVING = "problemSolving";

export interface ClaudiusMode {
  /** The soul machine's process name. */
  readonly process: PipelineProcessName;
  /** What the pipeline runs: the steps, their overrides, and the emotional transitions. */
  readonly pipeline: PipelineProcess;
  /**
   * Pipeline settings this mode insists on, over the soul's own. Frustration and deep work
   * check the soul state on every turn: both modes exist to be left as soon as the mood or
   * the task allows, and a check every third turn would keep the soul in them for up to two
   * turns too long.
   */
  readonly config: Partial<PipelineConfig>;
  /** Whether the mode reads and rewrites the user model (greeting and main do; the others skip it). */
  readonly usesUserModel: boolean;
}

const pipelineKeys: Readonly<Record<PipelineProcessName, string>> = {
  greeting: "greeting",
  main: MAIN_PROCESS.name,
  frustrated: "frustrated",
  deepWork: "deepWork",
};

/** The pipeline's name (`currentProcess`) for a soul process, and back. */
export function pipelineKeyOf(process: string): string {
  return Object.hasOwn(pipelineKeys, process) ? pipelineKeys[process as PipelineProcessName] : process;
}

export function processOfPipelineKey(key: string): string {
  const found = (Object.keys(pipelineKeys) as PipelineProcessName[]).find((p) => pipelineKeys[p] === key);
  return found ?? key;
}

const GREETING: PipelineProcess = {
  name: pipelineKeys.greeting,
  // The reference's greeting: a personality introduction and no soul state check.
  steps: ["internal_monologue", "external_dialogue", "user_model_check", "user_model_update"],
  instructionOverrides: {
    external_dialogue:
      "This is the first exchange. Introduce yourself in one sentence (who you are, what you make), then answer what they said, in your speaking style. VERB fits your emotional state (neutral: observed, noted, replied).",
  },
};

const MAIN: PipelineProcess = {
  name: pipelineKeys.main,
  steps: MAIN_PROCESS.steps,
  instructionOverrides: {
    internal_monologue: `${DEFAULT_STEP_INSTRUCTIONS.internal_monologue} If the message poses an open-ended problem that deserves deliberate, multi-step work (a design to weigh, a fault to diagnose, something to investigate) rather than a direct answer, end the monologue with the line ${OPEN_PROBLEM_MARKER} and keep the external dialogue to one sentence saying how you will approach it; you will then work it through before answering in full. Do not use the marker for anything you can answer well at once.`,
  },
  shouldTransition: ({ emotionalState }) => (emotionalState === "frustrated" ? pipelineKeys.frustrated : undefined),
};

const FRUSTRATED: PipelineProcess = {
  name: pipelineKeys.frustrated,
  // No user-model work while frustrated (mental-processes.md, frustrated.py).
  steps: ["internal_monologue", "external_dialogue", "soul_state_check", "soul_state_update"],
  instructionOverrides: {
    external_dialogue: "Keep responses to 1-2 sentences. Use verbs: pointed out, corrected, insisted.",
  },
  shouldTransition: ({ emotionalState }) => {
    if (emotionalState === "neutral" || emotionalState === "engaged") return pipelineKeys.main;
    if (emotionalState === "focused") return pipelineKeys.deepWork;
    return undefined;
  },
};

const DEEP_WORK: PipelineProcess = {
  name: pipelineKeys.deepWork,
  // Deep work skips user-model updates: the attention goes to the task.
  steps: ["internal_monologue", "external_dialogue", "soul_state_check", "soul_state_update"],
  instructionOverrides: {
    internal_monologue: `${DEFAULT_STEP_INSTRUCTIONS.internal_monologue} You are deep in the current task (see currentTask in your notes): plan the next concrete step. When the task is finished, end the monologue with the line ${TASK_COMPLETE_MARKER}.`,
    external_dialogue:
      "Work on the current task: precise and complete, show the work that matters (steps, code, figures) and say what remains. Use verbs: analyzed, traced, detailed.",
    // Escalate leaves a reference to the message, never its words (signals.ts): the model names the task itself.
    soul_state_check: `${DEFAULT_STEP_INSTRUCTIONS.soul_state_check} Answer true while currentTask still reads "${ESCALATED_TASK}".`,
    soul_state_update:
      `${DEFAULT_STEP_INSTRUCTIONS.soul_state_update} While currentTask reads "${ESCALATED_TASK}", name the task in a few words of your own in a \`currentTask:\` line. When the current task is finished, clear it with an empty \`currentTask:\` line.`,
  },
};

export const CLAUDIUS_MODES: Readonly<Record<PipelineProcessName, ClaudiusMode>> = Object.freeze({
  greeting: { process: "greeting", pipeline: GREETING, config: {}, usesUserModel: true },
  main: { process: "main", pipeline: MAIN, config: {}, usesUserModel: true },
  frustrated: {
    process: "frustrated",
    pipeline: FRUSTRATED,
    // The prompt asks for 1-2 sentences; this is the hard stop if the model rambles anyway.
    config: { soulStateInterval: 1, maxDialogueChars: 400 },
    usesUserModel: false,
  },
  deepWork: { process: "deepWork", pipeline: DEEP_WORK, config: { soulStateInterval: 1 }, usesUserModel: false },
});

/** The process table the pipeline's router resolves `currentProcess` in. */
export const PIPELINE_PROCESSES: Readonly<Record<string, PipelineProcess>> = Object.freeze(
  Object.fromEntries(Object.values(CLAUDIUS_MODES).map((m) => [m.pipeline.name, m.pipeline])),
);
