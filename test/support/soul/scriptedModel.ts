/**
 * A scripted LanguageModel: the stand-in for the LLM (outside the code under test) in soul
 * tests. Answers are queued per kind of cognitive step, recognised from the step's command
 * (the last message), so a test scripts "the ISM chooses Think, then Respond; the dialog says
 * ..." without caring how the steps interleave. A request with no answer left fails loudly.
 */
import type { CognitionContext } from "../../../runtime/cognition/CognitionContext.ts";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import { zeroUsage, type CompletionRequest, type LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";

export type StepKind = "choice" | "dialog" | "monologue" | "query";

/** A text, or a function of the request (which may wait: a test holds a step open with it). */
export type ScriptedAnswer = string | ((request: CompletionRequest) => string | Promise<string>);

export interface ScriptedCall {
  kind: StepKind;
  /** The step's command, i.e. the prompt's last message. */
  command: string;
  /** Every message the model saw. */
  messages: readonly { role: string; content: string }[];
}

export interface ScriptedModel extends LanguageModel {
  readonly calls: ScriptedCall[];
  /** Adds answers for later requests of that kind. */
  script(kind: StepKind, ...answers: ScriptedAnswer[]): void;
  /** Answers still queued, per kind: a finished test expects none left over. */
  left(): Partial<Record<StepKind, number>>;
}

/** Which standard step sent the request, from the wording of its command. */
export function stepKindOf(request: CompletionRequest): StepKind {
  const command = request.messages.at(-1)?.content ?? "";
  if (command.includes("You are deciding what to do next")) return "choice";
  if (command.includes("reasons about the veracity")) return "query";
  if (command.includes("internal monologue thought")) return "monologue";
  if (command.includes("next utterance")) return "dialog";
  throw new Error(`scripted model: cannot tell which step sent ${JSON.stringify(command.slice(0, 120))}`);
}

export function scriptedModel(script: Partial<Record<StepKind, ScriptedAnswer[]>> = {}): ScriptedModel {
  const queues = new Map<StepKind, ScriptedAnswer[]>();
  for (const [kind, answers] of Object.entries(script)) queues.set(kind as StepKind, [...(answers ?? [])]);
  const calls: ScriptedCall[] = [];
  const model: ScriptedModel = {
    provider: "scripted",
    calls,
    script(kind, ...answers) {
      queues.set(kind, [...(queues.get(kind) ?? []), ...answers]);
    },
    left() {
      const out: Partial<Record<StepKind, number>> = {};
      for (const [kind, queue] of queues) if (queue.length) out[kind] = queue.length;
      return out;
    },
    async complete(request) {
      const kind = stepKindOf(request);
      calls.push({ kind, command: request.messages.at(-1)?.content ?? "", messages: request.messages });
      const next = queues.get(kind)?.shift();
      if (next === undefined) throw new Error(`scripted model: no ${kind} answer left (call ${calls.length})`);
      const text = typeof next === "function" ? await next(request) : next;
      return { text, usage: zeroUsage(), provider: "scripted", model: request.model ?? "x" };
    },
    stream(request) {
      return createCompletionStream("scripted", async (sink) => {
        const completion = await model.complete(request);
        // Two chunks, so a streamed answer really arrives in pieces.
        const half = Math.ceil(completion.text.length / 2);
        sink.emit(completion.text.slice(0, half));
        sink.emit(completion.text.slice(half));
        return completion;
      });
    },
  };
  return model;
}

/** The cognition context a soul is created with: every step goes to the scripted model. */
export function scriptedCognition(model: LanguageModel): CognitionContext {
  return { registry: new ModelRegistry().register("scripted", model), defaultModel: "scripted:x" };
}

/** The ISM's answer: which actions to take. */
export const choose = (actions: string[], reasoning = "because"): string => JSON.stringify({ actions, reasoning });

/** mentalQuery's answer. */
export const verdict = (isStatementTrue: boolean): string => JSON.stringify({ isStatementTrue });
