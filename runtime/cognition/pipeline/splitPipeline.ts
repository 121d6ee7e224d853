/**
 * Split mode: the same pipeline as one call per step, each step routable to its own
 * `provider:model` (a fast model for the checks, a strong one for the dialogue, say). Every
 * call carries the same context sections as the unified prompt, asks for its one step only,
 * and sees what the earlier steps of the turn produced ("Earlier Steps This Turn"), so the
 * dialogue follows from the monologue as it does in one call. An update step runs only after
 * its check's call said true. The result has the unified shape; `calls` counts the calls.
 *
 * It costs more tokens and latency than unified mode (the context is sent once per step);
 * use it to route steps or with a model that cannot keep several sections apart.
 */
import { addUsage, zeroUsage } from "../../providers/index.ts";
import { currentCognition, reportUsage, resolveStepModel } from "../CognitionContext.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import { assemblePrompt, type AssembledPrompt, type EarlierStep } from "./assemblePrompt.ts";
import { pipelineConfig } from "./config.ts";
import { parsePipelineAnswer, type ParsedPipelineAnswer } from "./parseAnswer.ts";
import { outcomeOf, planFor, promptInputs, requestOf, type PipelineOptions } from "./runPipeline.ts";
import type { PipelineStep } from "./steps.ts";
import type { PipelineResult } from "./turnOutcome.ts";

export interface SplitPipelineOptions extends PipelineOptions {
  /** `provider:model` per step; steps not named use `model`, then the context default. */
  models?: Readonly<Partial<Record<PipelineStep, string>>>;
}

type Checks = { user_model_check?: boolean; soul_state_check?: boolean };

/** What one step's answer adds to the turn's parse, and to the next steps' prompts. */
function merge(into: ParsedPipelineAnswer, step: PipelineStep, part: ParsedPipelineAnswer, earlier: EarlierStep[]): void {
  const note = (content: string | undefined, verb?: string) => {
    if (content === undefined) return;
    earlier.push(verb ? { step, content, verb } : { step, content });
  };
  into.issues.push(...part.issues.map((i) => `${step}: ${i}`));
  switch (step) {
    case "internal_monologue":
      if (part.monologue !== undefined) into.monologue = part.monologue;
      if (part.verbs.monologue) into.verbs.monologue = part.verbs.monologue;
      note(part.monologue, part.verbs.monologue);
      break;
    case "external_dialogue":
      into.dialogue = part.dialogue;
      into.dialogueTagged = part.dialogueTagged;
      if (part.verbs.dialogue) into.verbs.dialogue = part.verbs.dialogue;
      note(part.dialogue, part.verbs.dialogue);
      break;
    case "user_model_check":
      if (part.userModelCheck !== undefined) into.userModelCheck = part.userModelCheck;
      note(part.userModelCheck === undefined ? undefined : String(part.userModelCheck));
      break;
    case "user_model_update":
      if (part.userModelUpdate !== undefined) into.userModelUpdate = part.userModelUpdate;
      if (part.changeNote !== undefined) into.changeNote = part.changeNote;
      note(part.changeNote);
      break;
    case "soul_state_check":
      if (part.soulStateCheck !== undefined) into.soulStateCheck = part.soulStateCheck;
      note(part.soulStateCheck === undefined ? undefined : String(part.soulStateCheck));
      break;
    case "soul_state_update":
      if (part.soulStateUpdate) into.soulStateUpdate = part.soulStateUpdate;
      break;
  }
}

export async function runSplitPipeline(memory: WorkingMemory, options: SplitPipelineOptions): Promise<[WorkingMemory, PipelineResult]> {
  await memory.finished;
  const config = pipelineConfig(options.config);
  const plan = planFor(memory, options, config);
  const ctx = currentCognition();
  const parsed: ParsedPipelineAnswer = { dialogue: "", dialogueTagged: false, verbs: {}, issues: [] };
  const earlier: EarlierStep[] = [];
  const checks: Checks = {};
  let first: AssembledPrompt | undefined;
  let usage = zeroUsage();
  let promptTokens = 0;
  let calls = 0;

  for (const step of plan.steps) {
    if (step === "user_model_update" && checks.user_model_check !== true) continue;
    if (step === "soul_state_update" && checks.soul_state_check !== true) continue;
    const prompt = assemblePrompt({ ...promptInputs(options), memory, message: options.message, config, plan, steps: [step], earlier });
    first ??= prompt;
    const resolved = resolveStepModel(ctx, step, memory.soulName, options.models?.[step] ?? options.model);
    const completion = await resolved.model.complete(requestOf(prompt, options, resolved.modelId));
    reportUsage(ctx, completion, step, memory.soulName);
    usage = addUsage(usage, completion.usage);
    promptTokens += prompt.tokens;
    calls += 1;
    // An update's own call holds no check: the verdict comes from the check's call.
    const asked: PipelineStep[] = step === "user_model_update" ? ["user_model_check", step] : step === "soul_state_update" ? ["soul_state_check", step] : [step];
    const part = parsePipelineAnswer(completion.text, asked, {
      maxDialogueChars: config.maxDialogueChars,
      knownChecks: checks,
      expectDialogue: step === "external_dialogue",
    });
    if (step === "user_model_check" && part.userModelCheck !== undefined) checks.user_model_check = part.userModelCheck;
    if (step === "soul_state_check" && part.soulStateCheck !== undefined) checks.soul_state_check = part.soulStateCheck;
    merge(parsed, step, part, earlier);
  }

  const prompt = first ?? assemblePrompt({ ...promptInputs(options), memory, message: options.message, config, plan });
  return outcomeOf(memory, options, prompt, parsed, { calls, usage, promptTokens });
}
