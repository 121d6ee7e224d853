/**
 * Unified mode: the whole cognitive pipeline in ONE model call per turn. The prompt asks for
 * the turn's tagged sections (`format: { type: "tags" }`, which the offline model honours and
 * real models read in the instructions), one answer comes back, the parser takes it apart.
 *
 * The model is the cognition context's (`runWithCognition`): `options.model` or the context
 * default, resolved through its registry and selector like any cognitive step, with usage
 * reported to its `onUsage`.
 */
import type { CompletionRequest, Usage } from "../../providers/index.ts";
import { chunkQueue } from "../chunkQueue.ts";
import { combineSignals, currentCognition, reportUsage, resolveStepModel } from "../CognitionContext.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import { assemblePrompt, type AssembledPrompt, type IncomingMessage, type PromptInputs } from "./assemblePrompt.ts";
import { pipelineConfig, type PipelineConfig } from "./config.ts";
import { DialogueStreamExtractor } from "./dialogueStream.ts";
import { planTurn, type TurnPlan } from "./gating.ts";
import { parsePipelineAnswer, type ParsedPipelineAnswer } from "./parseAnswer.ts";
import { turnOutcome, type PipelineResult } from "./turnOutcome.ts";

/** The step name the unified call reports to model selectors and usage meters. */
export const UNIFIED_STEP = "cognitivePipeline";

export interface PipelineOptions extends PromptInputs {
  message: IncomingMessage;
  config?: Partial<PipelineConfig>;
  /** Overrides the interaction number read from memory. */
  interaction?: number;
  /** `provider:model` for the call; the cognition context's default otherwise. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The turn's plan (its interaction number, steps and gated sections), whichever mode runs it. */
export function planFor(memory: WorkingMemory, options: PipelineOptions, config: PipelineConfig): TurnPlan {
  return planTurn(memory, {
    config,
    ...(options.soulState ? { soulState: options.soulState } : {}),
    ...(options.processes ? { processes: options.processes } : {}),
    ...(options.interaction !== undefined ? { interaction: options.interaction } : {}),
  });
}

export function preparePrompt(memory: WorkingMemory, options: PipelineOptions, config: PipelineConfig): AssembledPrompt {
  const plan = planFor(memory, options, config);
  return assemblePrompt({ ...promptInputs(options), memory, message: options.message, config, plan });
}

/** The options that feed the prompt, without undefined values. */
export function promptInputs(options: PipelineOptions): PromptInputs {
  return {
    ...(options.persona !== undefined ? { persona: options.persona } : {}),
    ...(options.skills !== undefined ? { skills: options.skills } : {}),
    ...(options.soulState !== undefined ? { soulState: options.soulState } : {}),
    ...(options.whisper !== undefined ? { whisper: options.whisper } : {}),
    ...(options.userModel !== undefined ? { userModel: options.userModel } : {}),
    ...(options.processes !== undefined ? { processes: options.processes } : {}),
  };
}

/** One model call of the turn: the prompt's messages and tags, the options' limits, the caller's and the turn's signals. */
export function requestOf(prompt: AssembledPrompt, options: PipelineOptions, modelId: string): CompletionRequest {
  const request: CompletionRequest = { messages: prompt.messages, model: modelId, format: { type: "tags", tags: prompt.tags } };
  if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
  if (options.temperature !== undefined) request.temperature = options.temperature;
  if (options.timeoutMs !== undefined) request.timeoutMs = options.timeoutMs;
  const signal = combineSignals(options.signal, currentCognition().signal);
  if (signal) request.signal = signal;
  return request;
}

/** What the turn amounts to, from its parsed answer (merged over the calls, in split mode) and the totals over its calls. */
export function outcomeOf(
  memory: WorkingMemory,
  options: PipelineOptions,
  prompt: AssembledPrompt,
  parsed: ParsedPipelineAnswer,
  totals: { calls: number; usage: Usage; promptTokens: number },
): [WorkingMemory, PipelineResult] {
  return turnOutcome({
    memory,
    prompt,
    parsed,
    message: options.message,
    ...(options.soulState ? { soulState: options.soulState } : {}),
    ...(prompt.personaContext ? { personaContext: prompt.personaContext } : {}),
    ...totals,
  });
}

/** One turn, one call: the new memory and what the turn produced. */
export async function runPipeline(memory: WorkingMemory, options: PipelineOptions): Promise<[WorkingMemory, PipelineResult]> {
  await memory.finished;
  const config = pipelineConfig(options.config);
  const prompt = preparePrompt(memory, options, config);
  const resolved = resolveStepModel(currentCognition(), UNIFIED_STEP, memory.soulName, options.model);
  const completion = await resolved.model.complete(requestOf(prompt, options, resolved.modelId));
  const usage = reportUsage(currentCognition(), completion, UNIFIED_STEP, memory.soulName);
  const parsed = parsePipelineAnswer(completion.text, prompt.steps, { maxDialogueChars: config.maxDialogueChars });
  return outcomeOf(memory, options, prompt, parsed, { calls: 1, usage, promptTokens: prompt.tokens });
}

export interface PipelineStream {
  /** The spoken text as it arrives: only what is inside `<external_dialogue>`. */
  dialogue: AsyncIterable<string>;
  /** Settles when the answer is complete and parsed. */
  done: Promise<[WorkingMemory, PipelineResult]>;
}

/**
 * One turn, one streamed call. The dialogue is released as it arrives (see
 * DialogueStreamExtractor); the monologue and the checks never enter the stream. Without an
 * `<external_dialogue>`, the fallback text is released once the answer is complete.
 */
export function streamPipeline(memory: WorkingMemory, options: PipelineOptions): PipelineStream {
  const queue = chunkQueue();
  const push = (text: string) => {
    if (text) queue.push(text);
  };

  const done = (async (): Promise<[WorkingMemory, PipelineResult]> => {
    let failure: unknown;
    try {
      await memory.finished;
      const config = pipelineConfig(options.config);
      const prompt = preparePrompt(memory, options, config);
      const resolved = resolveStepModel(currentCognition(), UNIFIED_STEP, memory.soulName, options.model);
      const stream = resolved.model.stream(requestOf(prompt, options, resolved.modelId));
      const extractor = new DialogueStreamExtractor(config.maxDialogueChars);
      for await (const chunk of stream) push(extractor.push(chunk));
      const completion = await stream.final;
      const usage = reportUsage(currentCognition(), completion, UNIFIED_STEP, memory.soulName);
      const parsed = parsePipelineAnswer(completion.text, prompt.steps, { maxDialogueChars: config.maxDialogueChars });
      push(extractor.finish(parsed.dialogue));
      const [next, result] = outcomeOf(memory, options, prompt, parsed, { calls: 1, usage, promptTokens: prompt.tokens });
      if (extractor.diverged) result.streamDiverged = true;
      return [next, result];
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      queue.end(failure);
    }
  })();
  // The failure reaches callers through `done` and the stream; not as an unhandled rejection.
  done.catch(() => undefined);

  return { dialogue: queue.chunks, done };
}
