/**
 * What a turn amounts to once its answer is parsed, whichever mode produced it: the new
 * working memory (monologue, dialogue and the checks the next turn's gates read), the soul
 * state after the update and any process transition, and the result callers act on (speak
 * the dialogue, save the user model, consume the whisper).
 */
import type { Usage } from "../../providers/index.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import type { AssembledPrompt, PromptSection } from "./assemblePrompt.ts";
import type { UserModelInjectionReason } from "./gating.ts";
import type { ParsedPipelineAnswer, PipelineVerbs } from "./parseAnswer.ts";
import { checkMemory, dialogueMemory, monologueMemory, perceptionMemory, personaMemory } from "./pipelineMemory.ts";
import { applySoulStateUpdate, soulStateOf, type SoulState } from "./soulState.ts";
import type { PipelineStep } from "./steps.ts";

/** Which optional sections the prompt held, and why the user model did (for tests and metrics). */
export interface InjectedSections {
  persona: boolean;
  skills: boolean;
  /** Any of the soul state was shown: its closed keys (`## Soul State`) or its notes (`## Your Notes`). */
  soulState: boolean;
  intuition: boolean;
  userModel: boolean;
  userModelReason?: UserModelInjectionReason;
  /** Whether this turn asked for the periodic soul-state check. */
  soulStateCheck: boolean;
  /** The steps the turn asked for, in pipeline order. */
  steps: PipelineStep[];
}

export interface PipelineResult {
  /** What the soul says. */
  dialogue: string;
  /** What the soul thought (kept in memory, never spoken). */
  monologue?: string;
  verbs: PipelineVerbs;
  /** The user-model check, when it was asked for and readable. */
  userModelCheck?: boolean;
  /** The rewritten user model (markdown), when the check was true; the caller saves it. */
  userModelUpdate?: string;
  changeNote?: string;
  soulStateCheck?: boolean;
  /** The soul-state keys the update set (only default keys, a valid emotionalState). */
  soulStateUpdate?: Partial<SoulState>;
  /** Update lines that were refused, with why. */
  soulStateRejected?: Record<string, string>;
  /** The soul state after this turn, transition included: what the caller stores. */
  soulState: SoulState;
  /** Set when the process changed this turn. */
  nextProcess?: string;
  injected: InjectedSections;
  /** The prompt's sections (of the first call, in split mode). */
  sections: PromptSection[];
  /** Estimated prompt tokens over every call of the turn (characters / 4). */
  promptTokens: number;
  interaction: number;
  /** Model calls the turn made. */
  calls: number;
  /** As the providers reported it, summed over the calls. */
  usage: Usage;
  /** Fallbacks the parser took. */
  issues: string[];
  /** Whether the streamed dialogue stopped matching the parsed one (streaming only). */
  streamDiverged?: boolean;
}

export interface TurnInputs {
  memory: WorkingMemory;
  prompt: AssembledPrompt;
  parsed: ParsedPipelineAnswer;
  message: { text: string; userName: string };
  soulState?: Partial<SoulState>;
  /** The first turn's persona and skills text, kept as the thread's context. */
  personaContext?: string;
  calls: number;
  usage: Usage;
  promptTokens: number;
}

export function injectedOf(prompt: AssembledPrompt): InjectedSections {
  const has = (name: PromptSection["name"]) => prompt.sections.some((s) => s.name === name);
  const injected: InjectedSections = {
    persona: has("persona"),
    skills: has("skills"),
    soulState: has("soulState") || has("soulNotes"),
    intuition: has("intuition"),
    userModel: has("userModel"),
    soulStateCheck: prompt.plan.soulStateCheck,
    steps: [...prompt.plan.steps],
  };
  if (injected.userModel && prompt.plan.userModelReason) injected.userModelReason = prompt.plan.userModelReason;
  return injected;
}

export function turnOutcome(t: TurnInputs): [WorkingMemory, PipelineResult] {
  const { plan } = t.prompt;
  const n = plan.interaction;
  const soul = t.memory.soulName;
  const { parsed } = t;
  let memory = t.memory;
  if (t.personaContext) memory = memory.withMemory(personaMemory(t.personaContext, n));
  memory = memory.withMemory(perceptionMemory(t.message.text, t.message.userName, n));
  if (parsed.monologue !== undefined) memory = memory.withMemory(monologueMemory(soul, parsed.monologue, parsed.verbs.monologue, n));
  memory = memory.withMemory(dialogueMemory(soul, parsed.dialogue, parsed.verbs.dialogue, n));
  // A check that was asked for is always recorded, an unreadable one as false: otherwise the
  // gate would walk past this turn and read an older verdict.
  if (plan.steps.includes("user_model_check")) {
    memory = memory.withMemory(checkMemory(soul, "userModelCheck", parsed.userModelCheck === true, n, parsed.userModelUpdate !== undefined));
  }
  if (plan.steps.includes("soul_state_check")) {
    memory = memory.withMemory(checkMemory(soul, "soulStateCheck", parsed.soulStateCheck === true, n, parsed.soulStateUpdate !== undefined));
  }

  let soulState = soulStateOf(t.soulState);
  const result: PipelineResult = {
    dialogue: parsed.dialogue,
    verbs: parsed.verbs,
    soulState,
    injected: injectedOf(t.prompt),
    sections: t.prompt.sections,
    promptTokens: t.promptTokens,
    interaction: n,
    calls: t.calls,
    usage: t.usage,
    issues: parsed.issues,
  };
  if (parsed.monologue !== undefined) result.monologue = parsed.monologue;
  if (parsed.userModelCheck !== undefined) result.userModelCheck = parsed.userModelCheck;
  if (parsed.userModelUpdate !== undefined) result.userModelUpdate = parsed.userModelUpdate;
  if (parsed.changeNote !== undefined) result.changeNote = parsed.changeNote;
  if (parsed.soulStateCheck !== undefined) result.soulStateCheck = parsed.soulStateCheck;
  if (parsed.soulStateUpdate) {
    const update = applySoulStateUpdate(soulState, parsed.soulStateUpdate);
    soulState = update.state;
    result.soulStateUpdate = update.applied;
    if (Object.keys(update.rejected).length > 0) result.soulStateRejected = update.rejected;
    // As the reference's router: a transition is judged on the emotional state this answer set.
    if (update.applied.emotionalState !== undefined) {
      const next = plan.process.shouldTransition?.({ emotionalState: update.applied.emotionalState });
      if (next && next !== plan.process.name) {
        soulState = { ...soulState, currentProcess: next };
        result.nextProcess = next;
      }
    }
  }
  result.soulState = soulState;
  return [memory, result];
}
