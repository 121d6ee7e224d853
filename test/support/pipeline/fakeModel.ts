/**
 * An in-process scripted model for pipeline unit tests: answers come from a function of the
 * request (or a list, one per call), every request is recorded, and `withModel` binds it as
 * the cognition context's default so `runPipeline` uses it.
 */
import { runWithCognition, type CognitionContext } from "../../../runtime/cognition/index.ts";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import type { Completion, CompletionRequest, LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import { estimateTokens } from "../../../runtime/providers/usage.ts";

export type Script = readonly string[] | ((request: CompletionRequest, index: number) => string);

export interface FakeModel extends LanguageModel {
  readonly requests: CompletionRequest[];
}

export function fakeModel(script: Script): FakeModel {
  const requests: CompletionRequest[] = [];
  const answer = (request: CompletionRequest): Completion => {
    const index = requests.length;
    requests.push(request);
    const text = typeof script === "function" ? script(request, index) : (script[index] ?? script.at(-1) ?? "");
    return {
      text,
      usage: { inputTokens: estimateTokens(request.messages.map((m) => m.content).join("\n")), outputTokens: estimateTokens(text) },
      provider: "fake",
      model: request.model ?? "fake",
    };
  };
  return {
    provider: "fake",
    requests,
    complete: async (request) => answer(request),
    stream: (request) =>
      createCompletionStream("fake", async (sink) => {
        const c = answer(request);
        for (const chunk of c.text.match(/[\s\S]{1,7}/g) ?? []) {
          sink.emit(chunk);
          await new Promise<void>((r) => setImmediate(r));
        }
        return c;
      }),
  };
}

export function contextFor(model: LanguageModel, extra: Partial<CognitionContext> = {}): CognitionContext {
  return { registry: new ModelRegistry().register(model.provider, model), defaultModel: `${model.provider}:default`, ...extra };
}

export function withModel<T>(model: LanguageModel, fn: () => Promise<T>): Promise<T> {
  return runWithCognition(contextFor(model), fn);
}

/** A well-formed answer to whatever tags were asked for. */
export function answerFor(
  request: CompletionRequest,
  opts: { userModelCheck?: boolean; soulStateCheck?: boolean; soulStateUpdate?: string; dialogue?: string; monologue?: string } = {},
): string {
  const tags = request.format?.type === "tags" ? request.format.tags : [];
  const parts: string[] = [];
  for (const tag of tags) {
    if (tag === "internal_monologue") parts.push(`<internal_monologue verb="pondered">${opts.monologue ?? "A private thought."}</internal_monologue>`);
    if (tag === "external_dialogue") parts.push(`<external_dialogue verb="said">${opts.dialogue ?? "Hello there."}</external_dialogue>`);
    if (tag === "user_model_check") parts.push(`<user_model_check>${opts.userModelCheck ?? false}</user_model_check>`);
    if (tag === "user_model_update" && opts.userModelCheck) parts.push(`<user_model_update># Tom\n\n## Persona\nLikes tea.</user_model_update>`);
    if (tag === "model_change_note" && opts.userModelCheck) parts.push(`<model_change_note>Learned he likes tea.</model_change_note>`);
    if (tag === "soul_state_check") parts.push(`<soul_state_check>${opts.soulStateCheck ?? false}</soul_state_check>`);
    if (tag === "soul_state_update" && opts.soulStateCheck) parts.push(`<soul_state_update>\n${opts.soulStateUpdate ?? "emotionalState: engaged"}\n</soul_state_update>`);
  }
  return parts.join("\n");
}
