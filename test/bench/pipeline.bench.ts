/**
 * The single-call cognitive pipeline: what the Samantha-Dreams gate saves in prompt tokens
 * over a scripted 20-turn conversation (a ~300-word, seven-section user model; the check true
 * on 3 of 20 turns), against injecting the user model on every turn, and how many model
 * calls a turn costs in unified and split mode. Tokens are characters / 4 (estimateTokens),
 * the same count on both arms. Run with `node --import tsx test/bench/run.ts pipeline`.
 */
import { performance } from "node:perf_hooks";
import { runSplitPipeline, runWithCognition, WorkingMemory } from "../../runtime/cognition/index.ts";
import type { BenchRow } from "./BenchRow.ts";
import { measureConversation, MESSAGES, PERSONA, USER_MODEL } from "../support/pipeline/conversation.ts";
import { answerFor, contextFor, fakeModel } from "../support/pipeline/fakeModel.ts";

const pct = (x: number) => Math.round(x * 1000) / 10;

/** Split mode over the same 20 messages, to show what one call per step costs. */
async function splitCalls(): Promise<{ calls: number; tokens: number }> {
  const model = fakeModel((request) => answerFor(request, { userModelCheck: false }));
  return runWithCognition(contextFor(model), async () => {
    let memory = new WorkingMemory({ soulName: "Samantha" });
    let calls = 0;
    let tokens = 0;
    for (const text of MESSAGES) {
      const [next, result] = await runSplitPipeline(memory, { message: { text, userName: "Tom" }, persona: PERSONA, userModel: USER_MODEL });
      memory = next;
      calls += result.calls;
      tokens += result.promptTokens;
    }
    return { calls, tokens };
  });
}

export async function run(): Promise<BenchRow[]> {
  const start = performance.now();
  const m = await measureConversation();
  const ms = performance.now() - start;
  const wide = await measureConversation({ historyWindow: 20 });
  const split = await splitCalls();
  const turns = m.turns.length;
  const callsPerTurn = m.modelCalls / turns;
  return [
    { name: "prompt tokens, 20 turns, Samantha-Dreams gate", value: m.gatedTotal, unit: "tokens" },
    { name: "prompt tokens, 20 turns, user model always injected", value: m.alwaysTotal, unit: "tokens" },
    { name: "prompt tokens saved by the gate (whole requests)", value: pct(m.saving), unit: "%", target: ">= 30%", met: m.saving >= 0.3 },
    { name: "saved, assembled sections only (no thread history)", value: pct(m.sectionSaving), unit: "%", target: ">= 30%", met: m.sectionSaving >= 0.3 },
    { name: "saved, with a 20-memory history window", value: pct(wide.saving), unit: "%" },
    { name: "turns that injected the user model", value: m.turns.filter((t) => t.userModelInjected).length, unit: `of ${turns}` },
    { name: "LLM calls per turn, unified mode", value: callsPerTurn, unit: "calls", target: "= 1", met: callsPerTurn === 1 },
    { name: "LLM calls per turn, split mode", value: split.calls / turns, unit: "calls" },
    { name: "prompt tokens, 20 turns, split mode", value: split.tokens, unit: "tokens" },
    { name: "pipeline overhead per turn (scripted model)", value: ms / turns, unit: "ms" },
  ];
}
