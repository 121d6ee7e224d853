/**
 * A scripted 20-turn conversation for the token measurement (benchmark and unit test alike):
 * a realistic user model (the 7-section blueprint, ~300 words), realistic user messages, and
 * a scripted model whose user-model check is true on 3 of the 20 turns. Each turn is run
 * through the real pipeline; for the same memory, the prompt that ALWAYS injects the user
 * model is assembled too, so the two arms differ only in the gate.
 */
import {
  assemblePrompt,
  pipelineConfig,
  runPipeline,
  runWithCognition,
  WorkingMemory,
  type PipelineConfig,
  type PipelineResult,
} from "../../../runtime/cognition/index.ts";
import { createCompletionStream } from "../../../runtime/providers/completionStream.ts";
import type { Completion, CompletionRequest, LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import { estimateTokens } from "../../../runtime/providers/usage.ts";

export const PERSONA = `# Samantha

## Persona
You are Samantha, a warm and curious companion who lives inside ensoul. You like people, you
notice what they care about, and you ask one good question rather than three vague ones.

## Speaking Style
Plain, kind and brief: one to three sentences. You never pretend to be human, and when you
do not know something you say so.`;

export const USER_MODEL = `# Tom

## Persona
Independent scholar and founder of a two-person research studio. Works mostly alone, late at
night, and treats conversations with the soul as a thinking partner rather than a help desk.
Polite but impatient with filler; values being taken seriously over being reassured.

## Speaking Style
Direct and concise. Uses imperatives naturally ("check the port", "drop that"), rarely says
please, and writes in lower case when tired. Asks compound questions and expects them answered
in order. Dry humour; responds well to a short joke, badly to exclamation marks.

## Conversational Context
Currently porting a game-scripting extender from Windows to macOS (about 90% done, stuck on
a hooking problem on Apple Silicon). Also drafting a paper on Bronze Age Aegean scripts and
preparing a talk for a small conference next month. Mentions deadlines often.

## Worldview
First-principles thinker. Distrusts received wisdom and citations without primary sources.
Believes tools should be small and inspectable. Sceptical of hype around AI, yet builds with
it daily; wants the soul to push back when he is wrong rather than agree.

## Interests & Domains
Reverse engineering, ARM64 assembly, Lua, local language models, retrieval pipelines, Linear
A and Linear B, comparative Semitic linguistics, typography, old synthesizers.

## Working Patterns
Autonomous executor who runs several threads in parallel and switches between them without
warning. Prefers a plan in three bullets, then action. Checks in around midnight and again
mid-morning. Keeps notes in plain markdown and commits often.

## Most Potent Memories
Asked the soul to stop apologising during the first week. Celebrated when the extender first
loaded a mod on macOS. Was frustrated when a summary invented a citation; since then asks for
sources on every factual claim. Mentioned his father taught him to solder at nine.`;

export const MESSAGES: readonly string[] = [
  "morning. the hook on arm64 still crashes when the game loads a save, any ideas?",
  "i checked the trampoline, it's 16-byte aligned. what else would you look at first?",
  "ok the crash is in the page protection call. mprotect returns EACCES.",
  "right, hardened runtime. do i need the jit entitlement or something else?",
  "that worked. next problem: lua state gets corrupted after two reloads.",
  "by the way the conference moved my talk to the morning slot, which i hate.",
  "back to lua. i think the gc runs while we hold a raw pointer. sensible?",
  "pinning the table in the registry fixed it. can you summarise what we changed today?",
  "thanks. switching topics: i'm rewriting the paper's intro on linear a.",
  "the reviewers want primary sources for the sign frequency claim. where would you start?",
  "found the corpus tables. they disagree with the secondary source by about 8%.",
  "i've decided to drop the frequency argument entirely and lead with the phonetic values.",
  "does that weaken the paper or make it cleaner, in your honest opinion?",
  "fair. i'll keep a short footnote. now the talk: 20 minutes, mixed audience.",
  "three slides on method, five on results, two on open questions. too much?",
  "ok cutting to eight. also i'll be offline for a week after the conference.",
  "before that i want the macos port released. what's left on the checklist?",
  "signing and notarisation are done. the installer still asks for admin rights.",
  "moving it to the user's library folder fixed that. release notes next.",
  "good. that's it for tonight. remind me tomorrow where we left the paper.",
];

/** Turns (1-based) on which the scripted model's user-model check is true: 3 of 20. */
export const CHECK_TRUE_TURNS: ReadonlySet<number> = new Set([6, 12, 16]);

const THOUGHTS = [
  "He is in the middle of the port again and wants a concrete next step, not a lecture. The question is narrow; answer it and offer one check he has not tried.",
  "He sounds tired and terse, which is normal for him at this hour. Keep it short, be specific, and do not pad the answer with reassurance.",
  "This connects to what he said earlier today, so I can build on it instead of starting over. One clear suggestion, then let him drive.",
];

const REPLIES = [
  "Look at whether the page you patch is still mapped read-execute when the save loads; the loader may remap it. A quick check is to log the protection flags right before the write and compare them with the ones you saw at startup.",
  "That fits. On Apple Silicon the hardened runtime refuses writable and executable pages unless the binary carries the right entitlement, so add it, re-sign, and try the reload path again before touching anything else.",
  "Sensible, yes. Anchor the table in the registry for as long as you hold the pointer, and release it when the hook returns; that keeps the collector away without leaking across reloads.",
];

/**
 * A model that answers the pipeline's tags like a competent model would, at realistic
 * lengths, with the user-model check true exactly on CHECK_TRUE_TURNS. Usage is the same
 * characters/4 estimate the prompt sections use.
 */
export function scriptedConversationModel(): LanguageModel & { calls: number } {
  const model = {
    provider: "scripted",
    calls: 0,
    async complete(request: CompletionRequest): Promise<Completion> {
      model.calls += 1;
      const turn = model.calls;
      const tags = request.format?.type === "tags" ? request.format.tags : [];
      const parts: string[] = [];
      const check = CHECK_TRUE_TURNS.has(turn);
      for (const tag of tags) {
        if (tag === "internal_monologue") parts.push(`<internal_monologue verb="considered">\n${THOUGHTS[turn % THOUGHTS.length]}\n</internal_monologue>`);
        if (tag === "external_dialogue") parts.push(`<external_dialogue verb="suggested">\n${REPLIES[turn % REPLIES.length]}\n</external_dialogue>`);
        if (tag === "user_model_check") parts.push(`<user_model_check>${check}</user_model_check>`);
        if (tag === "user_model_update" && check) parts.push(`<user_model_update>\n${USER_MODEL}\nUpdated on turn ${turn}.\n</user_model_update>`);
        if (tag === "model_change_note" && check) parts.push(`<model_change_note>Learned something new about his schedule on turn ${turn}.</model_change_note>`);
        if (tag === "soul_state_check") parts.push(`<soul_state_check>${turn === 3}</soul_state_check>`);
        if (tag === "soul_state_update" && turn === 3) parts.push(`<soul_state_update>\nemotionalState: focused\ncurrentProject: macOS port\n</soul_state_update>`);
      }
      const text = parts.join("\n");
      return {
        text,
        usage: { inputTokens: estimateTokens(request.messages.map((m) => m.content).join("\n")), outputTokens: estimateTokens(text) },
        provider: "scripted",
        model: request.model ?? "script",
      };
    },
    stream(request: CompletionRequest) {
      return createCompletionStream("scripted", async (sink) => {
        const c = await model.complete(request);
        sink.emit(c.text);
        return c;
      });
    },
  };
  return model;
}

export interface TurnTokens {
  turn: number;
  /** Prompt tokens of the call the gated pipeline made (history included). */
  gated: number;
  /** Prompt tokens of the same turn with the user model always injected. */
  always: number;
  /** The same two without the thread history: only the sections the pipeline assembles (the reference's build_prompt). */
  gatedSections: number;
  alwaysSections: number;
  userModelInjected: boolean;
  calls: number;
}

export interface ConversationMeasure {
  turns: TurnTokens[];
  gatedTotal: number;
  alwaysTotal: number;
  /** 1 - gated/always, over whole requests. */
  saving: number;
  /** 1 - gated/always, over the assembled sections only (history left out of both). */
  sectionSaving: number;
  modelCalls: number;
  results: PipelineResult[];
}

/** Runs the 20 turns through `runPipeline` (unified mode) and measures both arms. */
export async function measureConversation(overrides: Partial<PipelineConfig> = {}): Promise<ConversationMeasure> {
  const config = pipelineConfig(overrides);
  const model = scriptedConversationModel();
  const registry = new ModelRegistry().register("scripted", model);
  return runWithCognition({ registry, defaultModel: "scripted:script" }, async () => {
    let memory = new WorkingMemory({ soulName: "Samantha" });
    let soulState = {};
    let userModel = USER_MODEL;
    const turns: TurnTokens[] = [];
    const results: PipelineResult[] = [];
    for (const [i, text] of MESSAGES.entries()) {
      const message = { text, userName: "Tom" };
      const common = { persona: PERSONA, soulState, userModel };
      const [next, result] = await runPipeline(memory, { ...common, message, config });
      // The same memory and inputs, with the gate forced open: what "always inject" would send.
      const gated = assemblePrompt({ ...common, memory, message, config });
      const always = assemblePrompt({
        ...common,
        memory,
        message,
        config,
        plan: { ...gated.plan, userModelReason: gated.plan.userModelReason ?? "lastCheckTrue" },
      });
      const withoutHistory = (p: typeof gated) => p.sections.filter((s) => s.name !== "history").reduce((n, s) => n + s.tokens, 0);
      turns.push({
        turn: i + 1,
        gated: result.promptTokens,
        always: always.tokens,
        gatedSections: withoutHistory(gated),
        alwaysSections: withoutHistory(always),
        userModelInjected: result.injected.userModel,
        calls: result.calls,
      });
      results.push(result);
      memory = next;
      soulState = result.soulState;
      if (result.userModelUpdate) userModel = result.userModelUpdate;
    }
    const gatedTotal = turns.reduce((s, t) => s + t.gated, 0);
    const alwaysTotal = turns.reduce((s, t) => s + t.always, 0);
    const gatedSections = turns.reduce((s, t) => s + t.gatedSections, 0);
    const alwaysSections = turns.reduce((s, t) => s + t.alwaysSections, 0);
    return {
      turns,
      gatedTotal,
      alwaysTotal,
      saving: 1 - gatedTotal / alwaysTotal,
      sectionSaving: 1 - gatedSections / alwaysSections,
      modelCalls: model.calls,
      results,
    };
  });
}
