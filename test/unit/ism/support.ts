/**
 * Test doubles for the ISM suite: a scripted LanguageModel standing in for the LLM (which is
 * outside the code under test), a cognition context around it, and a fake soul turn scope.
 */
import { createActor, type AnyActorLogic, type AnyActorRef } from "xstate";
import { runWithCognition } from "../../../runtime/cognition/CognitionContext.ts";
import { WorkingMemory } from "../../../runtime/cognition/WorkingMemory.ts";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import { zeroUsage, type CompletionRequest, type LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import type { Perception } from "../../../actors/vocabulary/Perception.ts";
import type { TurnScope } from "../../../actors/vocabulary/turnScope.ts";

export type ScriptedAnswer = string | ((request: CompletionRequest) => string);

export interface ScriptedModel extends LanguageModel {
  /** Every request, in order. */
  readonly requests: CompletionRequest[];
  /** The last message of each request: the step's command (the choice prompt for the ISM). */
  readonly commands: string[];
}

/**
 * Answers from a queue; once the queue is empty it repeats `fallback`, or fails loudly, so a
 * test that asks the model more often than it should notices.
 */
export function scriptedModel(answers: readonly ScriptedAnswer[], fallback?: ScriptedAnswer): ScriptedModel {
  const queue = [...answers];
  const requests: CompletionRequest[] = [];
  const commands: string[] = [];
  const model: ScriptedModel = {
    provider: "scripted",
    requests,
    commands,
    async complete(request) {
      requests.push(request);
      commands.push(request.messages.at(-1)?.content ?? "");
      const next = queue.length ? queue.shift() : fallback;
      if (next === undefined) throw new Error(`scripted model has no answer left for request ${requests.length}`);
      const text = typeof next === "function" ? next(request) : next;
      return { text, usage: zeroUsage(), provider: "scripted", model: request.model ?? "x" };
    },
    stream(request) {
      return createCompletionStream("scripted", async (sink) => {
        const completion = await model.complete(request);
        sink.emit(completion.text);
        return completion;
      });
    },
  };
  return model;
}

export function withModel<T>(model: LanguageModel, fn: () => T): T {
  const registry = new ModelRegistry();
  registry.register("scripted", model);
  return runWithCognition({ registry, defaultModel: "scripted:x" }, fn);
}

/** A JSON action choice, as the model would answer. */
export function choice(actions: string[], reasoning: string): string {
  return JSON.stringify({ actions, reasoning });
}

export function memory(): WorkingMemory {
  return new WorkingMemory({
    soulName: "Samantha",
    memories: [
      { role: "system", content: "You are Samantha.", region: "core" },
      { role: "user", content: "My build fails with a type error.", name: "kev" },
    ],
  });
}

export function perception(content: string): Perception {
  return { id: `p-${content}`, action: "said", content, name: "kev", ts: Date.now() };
}

export interface FakeTurn extends TurnScope {
  readonly logs: { message: string; data?: Record<string, unknown> }[];
  readonly pending: Perception[];
  readonly controller: AbortController;
  /** Actors created through `spawnChild`. */
  readonly spawned: AnyActorRef[];
}

/**
 * A turn scope as the soul machine provides it. `spawnChild` creates the actor in `parent`'s
 * system when one is given (as the soul does), and starts it only when asked to, because the
 * ISM must cope with both.
 */
export function fakeTurn(opts: { parent?: AnyActorRef; startChild?: boolean } = {}): FakeTurn {
  const logs: FakeTurn["logs"] = [];
  const pending: Perception[] = [];
  const controller = new AbortController();
  const spawned: AnyActorRef[] = [];
  const turn: FakeTurn = {
    spawned,
    soulId: "samantha",
    soulName: "Samantha",
    logs,
    pending,
    controller,
    signal: controller.signal,
    pendingPerceptions: () => pending,
    spawnChild<TLogic extends AnyActorLogic>(logic: TLogic, input: unknown, id?: string) {
      const actor = createActor(logic as AnyActorLogic, { input, parent: opts.parent, id });
      spawned.push(actor);
      if (opts.startChild) actor.start();
      return actor as never;
    },
    log(message, data) {
      logs.push(data ? { message, data } : { message });
    },
  };
  return turn;
}
