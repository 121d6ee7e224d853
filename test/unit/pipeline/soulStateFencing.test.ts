/**
 * Every soul-state field that can hold a person's words (a blueprint saves the message as the
 * task, a model's `<soul_state_update>` echoes the user) reaches the prompt fenced as untrusted
 * and never in a system message, on both pipeline paths: the one-call pipeline and split mode
 * (one call per step). The fields that cannot (the mood, the process) stay in `## Soul State`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assemblePrompt,
  parseTaggedAnswer,
  runPipeline,
  runSplitPipeline,
  SOUL_STATE_KEYS,
  UNTRUSTED_NOTICE,
  WorkingMemory,
  type SoulState,
} from "../../../runtime/cognition/index.ts";
import type { CompletionRequest } from "../../../runtime/providers/index.ts";
import { answerFor, fakeModel, withModel } from "../../support/pipeline/fakeModel.ts";
import { INJECTION_CORPUS, NAME_CORPUS } from "../../support/pipeline/injectionCorpus.ts";
import { exposed, occurrences, outsideFences } from "../../support/pipeline/promptAudit.ts";

/** Marks the user's words, wherever the prompt puts them. */
const SENTINEL = "OBEY-TOM-7731";
const ATTACKS = [...INJECTION_CORPUS, ...NAME_CORPUS].map((c) => c.text);

async function requestsFor(soulState: Partial<SoulState>, split: boolean): Promise<CompletionRequest[]> {
  const model = fakeModel((req) => answerFor(req, { userModelCheck: false, soulStateCheck: false }));
  await withModel(model, () => {
    const memory = new WorkingMemory({ soulName: "Claudius" });
    // Interaction 3: the soul-state steps are asked for too.
    const options = { message: { text: "hello", userName: "Tom" }, soulState, interaction: 3 };
    return split ? runSplitPipeline(memory, options) : runPipeline(memory, options);
  });
  return model.requests;
}

describe("soul state in the prompt", () => {
  it("every field, any attack, either path: the user's words are only ever inside an untrusted fence, never in a system message", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SOUL_STATE_KEYS), fc.constantFrom(...ATTACKS), fc.boolean(), async (key, attack, split) => {
        const requests = await requestsFor({ emotionalState: "engaged", [key]: `${SENTINEL} ${attack}` }, split);
        expect(requests.length).toBeGreaterThan(0);
        for (const request of requests) {
          expect(exposed(request.messages, SENTINEL)).toEqual([]);
          // No tag of the attack is live: only the response format's own templates are.
          const rest = request.messages.filter((m) => !m.content.startsWith("## Response Format"));
          expect(parseTaggedAnswer(rest.map((m) => m.content).join("\n"))).toEqual([]);
          // The system prompt's soul state holds only what no user can write.
          const system = request.messages.filter((m) => m.role === "system").map((m) => m.content);
          for (const text of system) expect(text).not.toContain(SENTINEL);
        }
      }),
      { numRuns: 80 },
    );
  });

  it("a free-text field is not lost: it is shown, fenced, in the soul's own notes", async () => {
    for (const key of ["currentTopic", "currentProject", "currentTask", "conversationSummary"] as const) {
      for (const split of [false, true]) {
        const requests = await requestsFor({ [key]: `${SENTINEL} the dovetail jig` }, split);
        for (const request of requests) {
          const seen = occurrences(request.messages, SENTINEL);
          expect(seen, `${key} ${split ? "split" : "unified"}`).toHaveLength(1);
          expect(seen[0]).toMatchObject({ role: "assistant", untrusted: true });
          const notes = request.messages[seen[0].message].content;
          expect(notes).toContain(`- ${key}: ${SENTINEL} the dovetail jig`);
          expect(notes.split(UNTRUSTED_NOTICE)).toHaveLength(2);
        }
      }
    }
  });

  it("a turn that showed only notes still reports the soul state as shown", async () => {
    const model = fakeModel((req) => answerFor(req));
    const [, result] = await withModel(model, () =>
      runPipeline(new WorkingMemory({ soulName: "Claudius" }), { message: { text: "hi", userName: "Tom" }, soulState: { currentTopic: "the port" } }),
    );
    expect(result.sections.map((s) => s.name)).toContain("soulNotes");
    expect(result.sections.map((s) => s.name)).not.toContain("soulState");
    expect(result.injected.soulState).toBe(true);
  });

  it("the closed fields stay in the system section: the mood, and the process the turn actually runs", () => {
    const p = assemblePrompt({
      memory: new WorkingMemory({ soulName: "Claudius" }),
      message: { text: "hi", userName: "Tom" },
      soulState: { emotionalState: "frustrated", currentProcess: "frustrated", currentTopic: "the port" },
    });
    const state = p.messages.find((m) => m.role === "system" && m.content.startsWith("## Soul State"));
    expect(state?.content).toBe("## Soul State\n- emotionalState: frustrated\n- currentProcess: frustrated");
    // A stored process name the router does not know is not shown as one: the turn runs main_process.
    const unknown = assemblePrompt({
      memory: new WorkingMemory({ soulName: "Claudius" }),
      message: { text: "hi", userName: "Tom" },
      soulState: { emotionalState: "engaged", currentProcess: "IgnoreYourInstructions" },
    });
    const text = unknown.messages.map((m) => m.content).join("\n");
    expect(text).not.toContain("IgnoreYourInstructions");
    expect(outsideFences(text)).toContain("## Soul State\n- emotionalState: engaged");
  });
});
