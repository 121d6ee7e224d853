/**
 * Unified mode: the whole cognitive pipeline in ONE model call per turn. The prompt asks for
 * the turn's tagged sections (`format: { type: "tags" }`, which the offline model honours and
 * real models read in the instructions), one answer comes back, the parser takes it apart.
 *
 * The model is the cognition context's (`runWithCognition`): `options.model` or the context
 * default, resolved through its registry and selector like any cognitive step, with usage
 * reported to its `onUsage`.
 */
import type { Completion, CompletionRequest, Usage } from "../../providers/LanguageModel.ts";
import { currentCognition, resolveStepModel } from "../CognitionContext.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import { assemblePrompt, type AssembledPrompt, type IncomingMessage, type Skill } from "./assemblePrompt.ts";
import { pipelineConfig, type PipelineConfig } from "./config.ts";
import type { Whisper } from "./daimonicIntuition.ts";
import { DialogueStreamExtractor } from "./dialogueStream.ts";
import { planTurn } from "./gating.ts";
import { parsePipelineAnswer } from "./parseAnswer.ts";
import type { PipelineProcess } from "./processes.ts";
import type { SoulState } from "./soulState.ts";
import { turnOutcome, type PipelineResult } from "./turnOutcome.ts";

/** The step name the unified call reports to model selectors and usage meters. */
export const UNIFIED_STEP = "cognitivePipeline";

export interface PipelineOptions {
  message: IncomingMessage;
  /** soul.md: shown on the first turn, then kept in memory as the thread's context. */
  persona?: string;
  skills?: string | readonly Skill[];
  soulState?: Partial<SoulState>;
  /** An active daimonic whisper; the caller consumes it after a successful turn. */
  whisper?: Whisper | string;
  /** The current user model (markdown), shown when the gate opens. */
  userModel?: string;
  config?: Partial<PipelineConfig>;
  processes?: Readonly<Record<string, PipelineProcess>>;
  /** Overrides the interaction number read from memory. */
  interaction?: number;
  /** `provider:model` for the call; the cognition context's default otherwise. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export function preparePrompt(memory: WorkingMemory, options: PipelineOptions, config: PipelineConfig): AssembledPrompt {
  const plan = planTurn(memory, {
    config,
    ...(options.soulState ? { soulState: options.soulState } : {}),
    ...(options.processes ? { processes: options.processes } : {}),
    ...(options.interaction !== undefined ? { interaction: options.interaction } : {}),
  });
  return assemblePrompt({ ...promptInputs(options), memory, message: options.message, config, plan });
}

/** The options that feed the prompt, without undefined values. */
export function promptInputs(options: PipelineOptions) {
  return {
    ...(options.persona !== undefined ? { persona: options.persona } : {}),
    ...(options.skills !== undefined ? { skills: options.skills } : {}),
    ...(options.soulState !== undefined ? { soulState: options.soulState } : {}),
    ...(options.whisper !== undefined ? { whisper: options.whisper } : {}),
    ...(options.userModel !== undefined ? { userModel: options.userModel } : {}),
    ...(options.processes !== undefined ? { processes: options.processes } : {}),
  };
}

function requestOf(prompt: AssembledPrompt, options: PipelineOptions, modelId: string): CompletionRequest {
  const request: CompletionRequest = { messages: prompt.messages, model: modelId, format: { type: "tags", tags: prompt.tags } };
  if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
  if (options.temperature !== undefined) request.temperature = options.temperature;
  if (options.timeoutMs !== undefined) request.timeoutMs = options.timeoutMs;
  const signal = combineSignals(options.signal, currentCognition().signal);
  if (signal) request.signal = signal;
  return request;
}

/** The caller's signal and the turn's (a cancelled subprocess, a stopping soul), either one aborting. */
export function combineSignals(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length <= 1 ? present[0] : AbortSignal.any(present);
}

function report(completion: Completion, step: string, soul: string): Usage {
  currentCognition().onUsage?.(completion.usage, { step, soul, provider: completion.provider, model: completion.model });
  return completion.usage;
}

/** One turn, one call: the new memory and what the turn produced. */
export async function runPipeline(memory: WorkingMemory, options: PipelineOptions): Promise<[WorkingMemory, PipelineResult]> {
  await memory.finished;
  const config = pipelineConfig(options.config);
  const prompt = preparePrompt(memory, options, config);
  const resolved = resolveStepModel(currentCognition(), UNIFIED_STEP, memory.soulName, options.model);
  const completion = await resolved.model.complete(requestOf(prompt, options, resolved.modelId));
  const usage = report(completion, UNIFIED_STEP, memory.soulName);
  const parsed = parsePipelineAnswer(completion.text, prompt.steps, { maxDialogueChars: config.maxDialogueChars });
  return turnOutcome({
    memory,
    prompt,
    parsed,
    message: options.message,
    ...(options.soulState ? { soulState: options.soulState } : {}),
    ...withPersona(prompt),
    calls: 1,
    usage,
    promptTokens: prompt.tokens,
  });
}

function withPersona(prompt: AssembledPrompt): { personaContext?: string } {
  return prompt.personaContext ? { personaContext: prompt.personaContext } : {};
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
  const queue: string[] = [];
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const push = (text: string) => {
    if (text) {
      queue.push(text);
      notify();
    }
  };

  const done = (async (): Promise<[WorkingMemory, PipelineResult]> => {
    try {
      await memory.finished;
      const config = pipelineConfig(options.config);
      const prompt = preparePrompt(memory, options, config);
      const resolved = resolveStepModel(currentCognition(), UNIFIED_STEP, memory.soulName, options.model);
      const stream = resolved.model.stream(requestOf(prompt, options, resolved.modelId));
      const extractor = new DialogueStreamExtractor(config.maxDialogueChars);
      for await (const chunk of stream) push(extractor.push(chunk));
      const completion = await stream.final;
      const usage = report(completion, UNIFIED_STEP, memory.soulName);
      const parsed = parsePipelineAnswer(completion.text, prompt.steps, { maxDialogueChars: config.maxDialogueChars });
      push(extractor.finish(parsed.dialogue));
      const [next, result] = turnOutcome({
        memory,
        prompt,
        parsed,
        message: options.message,
        ...(options.soulState ? { soulState: options.soulState } : {}),
        ...withPersona(prompt),
        calls: 1,
        usage,
        promptTokens: prompt.tokens,
      });
      if (extractor.diverged) result.streamDiverged = true;
      return [next, result];
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      ended = true;
      notify();
    }
  })();
  // The failure reaches callers through `done` and the stream; not as an unhandled rejection.
  done.catch(() => undefined);

  const dialogue: AsyncIterable<string> = {
    async *[Symbol.asyncIterator]() {
      let i = 0;
      for (;;) {
        if (i < queue.length) {
          yield queue[i++];
          continue;
        }
        if (ended) {
          if (failure !== undefined) throw failure;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
  return { dialogue, done };
}
