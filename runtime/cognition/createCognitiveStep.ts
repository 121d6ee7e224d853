import type { z } from "zod";
import type { ChatMessage, CompletionRequest, ResponseFormat } from "../providers/index.ts";
import { chunkQueue } from "./chunkQueue.ts";
import { combineSignals, currentCognition, reportUsage, resolveStepModel, type ResolvedModel } from "./CognitionContext.ts";
import type { InputMemory } from "./Memory.ts";
import { parseJsonAnswer, toJsonSchema } from "./sanitize.ts";
import { StepTally } from "./stepTrace.ts";
import { toPromptMessage } from "./untrustedMemory.ts";
import { WorkingMemory } from "./WorkingMemory.ts";

/** What a step definition returns for one call: the Open Souls step shape. */
export interface CognitiveStepSpec<Raw, Value> {
  /** The instruction, as a system message, or built from the memory it runs on. */
  command: string | ((memory: WorkingMemory) => string | InputMemory);
  /** When present the model must answer JSON matching it; the step retries once, then fails clearly. */
  schema?: z.ZodType<Raw>;
  /** Turns the answer into the memory to append and the value to return. */
  postProcess?: (memory: WorkingMemory, response: Raw) => Promise<[InputMemory, Value]> | [InputMemory, Value];
  /**
   * Rewrites streamed chunks on their way to the caller (e.g. drops a `Soul said:` prefix).
   * May return a promise of the stream, as Open Souls blueprints' processors often do.
   */
  streamProcessor?: (
    memory: WorkingMemory,
    stream: AsyncIterable<string>,
  ) => AsyncIterable<string> | Promise<AsyncIterable<string>>;
  /** The format the answer must take, for models that honour hints (the offline model). */
  format?: ResponseFormat;
}

export interface StepOptions {
  /** `provider:model`; otherwise the turn's default model. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export type CognitiveStep<Arg, Value> = {
  (memory: WorkingMemory, arg: Arg, options?: StepOptions & { stream?: false }): Promise<[WorkingMemory, Value]>;
  (
    memory: WorkingMemory,
    arg: Arg,
    options: StepOptions & { stream: true },
  ): Promise<[WorkingMemory, AsyncIterable<string>, Promise<Value>]>;
  readonly stepName: string;
};

export class CognitiveStepError extends Error {
  readonly step: string;
  constructor(step: string, message: string, options?: { cause?: unknown }) {
    super(`${step}: ${message}`, options);
    this.name = "CognitiveStepError";
    this.step = step;
  }
}

const JSON_INSTRUCTION = (schema: Record<string, unknown>) =>
  `Respond with only a JSON value that matches this JSON schema, with no prose and no markdown:\n${JSON.stringify(schema)}`;

/**
 * Builds a cognitive step, Open Souls style: a small function from an argument to a spec,
 * run against working memory with the turn's model. Steps are pure with respect to memory:
 * they return a new WorkingMemory and never touch the one they were given.
 */
export function createCognitiveStep<Arg, Raw = string, Value = Raw>(
  define: (arg: Arg) => CognitiveStepSpec<Raw, Value>,
  options: { name?: string } = {},
): CognitiveStep<Arg, Value> {
  const stepName = options.name ?? (define.name || "cognitiveStep");

  async function run(
    memory: WorkingMemory,
    arg: Arg,
    opts: StepOptions & { stream?: boolean } = {},
  ): Promise<[WorkingMemory, Value] | [WorkingMemory, AsyncIterable<string>, Promise<Value>]> {
    await memory.finished;
    const spec = define(arg);
    const ctx = currentCognition();
    const resolved = resolveStepModel(ctx, stepName, memory.soulName, opts.model);
    const jsonSchema = spec.schema ? toJsonSchema(spec.schema) : undefined;
    const format: ResponseFormat | undefined = jsonSchema ? { type: "json", schema: jsonSchema } : spec.format;
    const messages = buildMessages(memory, spec, jsonSchema);
    const signal = combineSignals(opts.signal, ctx.signal);
    const request: CompletionRequest = {
      messages,
      model: resolved.modelId,
      temperature: opts.temperature,
      maxTokens: opts.maxTokens,
      timeoutMs: opts.timeoutMs,
      signal,
      format,
    };
    const tally = ctx.onStep ? new StepTally(ctx.onStep, stepName, resolved.name, memory.memories, messages) : undefined;
    const finish = async (raw: Raw): Promise<[WorkingMemory, Value]> => {
      const [added, value] = spec.postProcess
        ? await spec.postProcess(memory, raw)
        : ([{ role: "assistant", content: String(raw) }, raw as unknown as Value] as [InputMemory, Value]);
      tally?.done(raw, value);
      return [memory.withMemory(added), value];
    };

    if (opts.stream) {
      if (spec.schema) throw new CognitiveStepError(stepName, "a schema step cannot stream");
      return streamStep(stepName, memory, spec, request, resolved, finish, tally);
    }

    try {
      const raw = spec.schema
        ? await completeJson(stepName, memory.soulName, request, resolved, spec.schema, tally)
        : ((await complete(stepName, memory.soulName, request, resolved, tally)) as unknown as Raw);
      return await finish(raw);
    } catch (error) {
      tally?.failed(error);
      throw error;
    }
  }

  return Object.assign(run, { stepName }) as CognitiveStep<Arg, Value>;
}

function buildMessages(
  memory: WorkingMemory,
  spec: Pick<CognitiveStepSpec<unknown, unknown>, "command">,
  jsonSchema: Record<string, unknown> | undefined,
): ChatMessage[] {
  // The one place a step's memory becomes messages: what came from outside is fenced here.
  const messages: ChatMessage[] = memory.memories.map(toPromptMessage);
  const command = typeof spec.command === "function" ? spec.command(memory) : spec.command;
  const commandMessage: ChatMessage =
    typeof command === "string" ? { role: "system", content: command } : { role: command.role, content: command.content };
  if (typeof command !== "string" && command.name !== undefined) commandMessage.name = command.name;
  if (jsonSchema) commandMessage.content += `\n\n${JSON_INSTRUCTION(jsonSchema)}`;
  messages.push(commandMessage);
  return messages;
}

async function complete(step: string, soul: string, request: CompletionRequest, resolved: ResolvedModel, tally?: StepTally): Promise<string> {
  const completion = await resolved.model.complete(request);
  reportUsage(currentCognition(), completion, step, soul, tally);
  return completion.text;
}

/** One retry with the parse error fed back, then a clear error that quotes the answer. */
async function completeJson<Raw>(
  step: string,
  soul: string,
  request: CompletionRequest,
  resolved: ResolvedModel,
  schema: z.ZodType<Raw>,
  tally?: StepTally,
): Promise<Raw> {
  let text = await complete(step, soul, request, resolved, tally);
  let parsed = parseJsonAnswer(text, schema);
  if (parsed.ok) return parsed.value;
  const retry: CompletionRequest = {
    ...request,
    messages: [
      ...request.messages,
      { role: "assistant", content: text },
      { role: "user", content: `That answer was not usable: ${parsed.error}. Answer again with only the JSON.` },
    ],
  };
  text = await complete(step, soul, retry, resolved, tally);
  parsed = parseJsonAnswer(text, schema);
  if (parsed.ok) return parsed.value;
  throw new CognitiveStepError(
    step,
    `${resolved.name} ignored the requested format twice (${parsed.error}); last answer: ${JSON.stringify(text.slice(0, 200))}`,
  );
}

function streamStep<Raw, Value>(
  step: string,
  memory: WorkingMemory,
  spec: CognitiveStepSpec<Raw, Value>,
  request: CompletionRequest,
  resolved: ResolvedModel,
  finish: (raw: Raw) => Promise<[WorkingMemory, Value]>,
  tally: StepTally | undefined,
): [WorkingMemory, AsyncIterable<string>, Promise<Value>] {
  const source = resolved.model.stream(request);
  const ctx = currentCognition();
  const raw = source.final.then((completion) => {
    reportUsage(ctx, completion, step, memory.soulName, tally);
    return completion.text as unknown as Raw;
  });
  const outcome = raw.then(finish);
  if (tally) outcome.catch((error: unknown) => tally.failed(error));
  const processed = spec.streamProcessor ? spec.streamProcessor(memory, source) : source;
  const chunks = bufferedStream(processed);
  const value = outcome.then(([, v]) => v);
  // Callers may ignore either half; the other half still reports the failure.
  value.catch(() => undefined);
  return [WorkingMemory.pending(memory.soulName, outcome.then(([m]) => m)), chunks, value];
}

/**
 * Drains the source at once, whether or not anyone reads it, so the step completes even when
 * the caller only awaits the value; a reader gets every chunk from the start.
 */
function bufferedStream(source: AsyncIterable<string> | Promise<AsyncIterable<string>>): AsyncIterable<string> {
  const queue = chunkQueue();
  const drain = async () => {
    for await (const chunk of await source) queue.push(chunk);
  };
  // The queue's reader gets the failure; the drain itself never rejects unheard.
  drain().then(
    () => queue.end(undefined),
    (failure: unknown) => queue.end(failure),
  );
  return queue.chunks;
}
