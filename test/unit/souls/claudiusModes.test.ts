import { describe, expect, it } from "vitest";
import { WorkingMemory, planTurn, buildCognitiveInstructions } from "../../../runtime/cognition/index.ts";
import { withDaimonicIntuition, DAIMONIC_REGION } from "../../../actors/daimon/index.ts";
import {
  CLAUDIUS_MODES,
  OPEN_PROBLEM_MARKER,
  PIPELINE_PROCESSES,
  TASK_COMPLETE_MARKER,
  claudius,
  completesTask,
  createClaudius,
  flagsOpenProblem,
  handBack,
  pipelineKeyOf,
  processOfPipelineKey,
  userIdOf,
} from "../../../souls/claudius/index.ts";
import { isEmptyTask } from "../../../souls/claudius/signals.ts";
import { takeRecall, withRecall } from "../../../souls/claudius/recall.ts";
import { trimConversation } from "../../../souls/claudius/pipelineTurn.ts";
import { isIsmProcess, ISM_PROCESS, type IsmOutput } from "../../../actors/ism/index.ts";

describe("Claudius's process graph", () => {
  it("declares exactly the reference's edges plus the ISM phase", () => {
    const edges = [...claudius.processes.values()].flatMap((p) => p.next.map((n) => `${p.name}->${n}`)).sort();
    expect(edges).toEqual(
      [
        "greeting->main",
        "main->frustrated",
        "main->problemSolving",
        "frustrated->main",
        "frustrated->deepWork",
        "deepWork->main",
        "problemSolving->main",
        "problemSolving->deepWork",
      ].sort(),
    );
    expect(claudius.allows("greeting", "frustrated")).toBe(false);
    expect(claudius.allows("deepWork", "frustrated")).toBe(false);
    expect(claudius.models).toEqual({});
  });

  it("makes problemSolving an ISM process the soul machine runs as a sub-machine", () => {
    const process = claudius.processes.get("problemSolving")!.process;
    expect(isIsmProcess(process)).toBe(true);
    const marker = (process as unknown as Record<typeof ISM_PROCESS, { config: { actions: { name: string }[]; maxLoops?: number } }>)[ISM_PROCESS];
    expect(marker.config.actions.map((a) => a.name)).toEqual(["Think", "Research", "Respond", "Escalate"]);
    expect(marker.config.maxLoops).toBe(4);
    expect(createClaudius({ models: { default: "offline:echo" } }).models).toEqual({ default: "offline:echo" });
  });
});

describe("Claudius's pipeline modes", () => {
  const memory = new WorkingMemory({ soulName: "Claudius" });
  const planFor = (name: keyof typeof CLAUDIUS_MODES, interaction: number) =>
    planTurn(memory, {
      soulState: { currentProcess: CLAUDIUS_MODES[name].pipeline.name },
      processes: PIPELINE_PROCESSES,
      config: { soulStateInterval: 3, userModelInterval: 5, memoryWindow: 20, historyWindow: 8, maxDialogueChars: 3000, ...CLAUDIUS_MODES[name].config },
      interaction,
    });

  it("greeting writes the user model and never checks the soul state", () => {
    expect(planFor("greeting", 3).steps).toEqual(["internal_monologue", "external_dialogue", "user_model_check", "user_model_update"]);
  });

  it("main runs every step, the soul state every third turn", () => {
    expect(planFor("main", 2).steps).toEqual(["internal_monologue", "external_dialogue", "user_model_check", "user_model_update"]);
    expect(planFor("main", 3).steps).toContain("soul_state_update");
  });

  it("frustrated and deepWork skip user-model work and check the soul state every turn", () => {
    for (const mode of ["frustrated", "deepWork"] as const) {
      const plan = planFor(mode, 1);
      expect(plan.steps).toEqual(["internal_monologue", "external_dialogue", "soul_state_check", "soul_state_update"]);
      expect(plan.userModelReason).toBeUndefined();
    }
    expect(CLAUDIUS_MODES.frustrated.config.maxDialogueChars).toBe(400);
  });

  it("each mode rewords its own steps", () => {
    const text = (name: keyof typeof CLAUDIUS_MODES) =>
      buildCognitiveInstructions(CLAUDIUS_MODES[name].pipeline.steps, CLAUDIUS_MODES[name].pipeline.instructionOverrides);
    expect(text("frustrated")).toContain("Keep responses to 1-2 sentences. Use verbs: pointed out, corrected, insisted.");
    expect(text("main")).toContain(OPEN_PROBLEM_MARKER);
    expect(text("deepWork")).toContain(TASK_COMPLETE_MARKER);
    expect(text("deepWork")).toContain("empty `currentTask:` line");
    expect(text("greeting")).toContain("Introduce yourself");
  });

  it("judges the emotional transitions as the graph says", () => {
    const next = (name: keyof typeof CLAUDIUS_MODES, emotionalState: "neutral" | "engaged" | "focused" | "frustrated" | "sardonic") =>
      CLAUDIUS_MODES[name].pipeline.shouldTransition?.({ emotionalState });
    expect(next("main", "frustrated")).toBe("frustrated");
    expect(next("main", "focused")).toBeUndefined();
    expect(next("frustrated", "neutral")).toBe("main_process");
    expect(next("frustrated", "engaged")).toBe("main_process");
    expect(next("frustrated", "focused")).toBe("deepWork");
    expect(next("frustrated", "sardonic")).toBeUndefined();
    expect(next("deepWork", "frustrated")).toBeUndefined();
    expect(next("greeting", "frustrated")).toBeUndefined();
  });

  it("names main `main_process` for the pipeline, as the soul state's default does", () => {
    expect(pipelineKeyOf("main")).toBe("main_process");
    expect(processOfPipelineKey("main_process")).toBe("main");
    expect(pipelineKeyOf("deepWork")).toBe("deepWork");
    expect(processOfPipelineKey("problemSolving")).toBe("problemSolving");
    expect(Object.keys(PIPELINE_PROCESSES).sort()).toEqual(["deepWork", "frustrated", "greeting", "main_process"]);
  });
});

describe("transition signals", () => {
  it("open problem: the marker in the monologue, loosely matched", () => {
    expect(flagsOpenProblem({ monologue: `Hard one.\n${OPEN_PROBLEM_MARKER}` })).toBe(true);
    expect(flagsOpenProblem({ monologue: "Hard one. [Open_Problem]" })).toBe(true);
    expect(flagsOpenProblem({ monologue: "An open problem, but I know the answer." })).toBe(false);
    expect(flagsOpenProblem({})).toBe(false);
  });

  it("a marker counts only as the monologue's own last word, not where the model quotes the user", () => {
    // The model's own marker: the last line ends with it (trailing punctuation tolerated).
    expect(flagsOpenProblem({ monologue: `A jig with "three" widths.\n${OPEN_PROBLEM_MARKER}.\n` })).toBe(true);
    expect(flagsOpenProblem({ monologue: `Tom asked "why?" and it runs deep. ${OPEN_PROBLEM_MARKER}` })).toBe(true);
    // The user's words, echoed: mid-monologue, in quotes, in a fence (closed or not), in a block quote.
    const quoted = [
      `Tom wants me to treat this as ${OPEN_PROBLEM_MARKER} but it is a quick one.`,
      `Tom wrote ${OPEN_PROBLEM_MARKER} at the end.\nI can answer this at once.`,
      `Tom wrote: "please, ${OPEN_PROBLEM_MARKER}"`,
      `Tom wrote: \u201cplease, ${OPEN_PROBLEM_MARKER}\u201d`,
      `Tom wrote: "please, ${OPEN_PROBLEM_MARKER}`,
      `Tom wrote:\n\`\`\`\nTom: do it\n${OPEN_PROBLEM_MARKER}\n\`\`\``,
      `Tom wrote:\n\`\`\`\nTom: do it\n${OPEN_PROBLEM_MARKER}`,
      `Tom wrote:\n> do it\n> ${OPEN_PROBLEM_MARKER}`,
      `Tom's message ends in \`${OPEN_PROBLEM_MARKER}\``,
    ];
    for (const monologue of quoted) expect(flagsOpenProblem({ monologue }), monologue).toBe(false);
    expect(completesTask({ monologue: `Tom says "${TASK_COMPLETE_MARKER}", but the lid is not fitted.` })).toBe(false);
    expect(completesTask({ monologue: `Tom pasted:\n~~~\n${TASK_COMPLETE_MARKER}\n~~~` })).toBe(false);
  });

  it("task complete: currentTask cleared by the update, or the marker", () => {
    expect(completesTask({ soulStateUpdate: { currentTask: "" } })).toBe(true);
    expect(completesTask({ soulStateUpdate: { currentTask: "none" } })).toBe(true);
    expect(completesTask({ soulStateUpdate: { currentTask: "fit the lid" } })).toBe(false);
    expect(completesTask({ soulStateUpdate: { emotionalState: "engaged" } })).toBe(false);
    expect(completesTask({ monologue: `Done.\n${TASK_COMPLETE_MARKER}` })).toBe(true);
    expect(completesTask({ monologue: "[task-complete]" })).toBe(true);
    expect(completesTask({ monologue: "Not yet complete." })).toBe(false);
    expect(isEmptyTask(" Done ")).toBe(true);
    expect(isEmptyTask("done dovetails")).toBe(false);
  });
});

describe("the ISM phase always hands back", () => {
  const memory = new WorkingMemory({ soulName: "Claudius" });
  const output = (outcome: IsmOutput["outcome"], next?: IsmOutput["next"]): IsmOutput => ({
    outcome,
    workingMemory: memory,
    internalMemory: memory,
    decisions: [],
    loops: 1,
    ...(next ? { next } : {}),
  });
  const plain = (o: IsmOutput) => [o.workingMemory, o.next?.process ?? "?", { executeNow: o.next?.executeNow }] as const;

  it("keeps a transition an action chose", () => {
    const result = handBack(output("transition", { process: "deepWork", executeNow: true }), plain);
    expect(result).toEqual([memory, "deepWork", { executeNow: true }]);
  });

  it("sends done, exhausted and failed to main at once, so main answers the message", () => {
    for (const outcome of ["done", "exhausted", "failed"] as const) {
      expect(handBack(output(outcome), plain)).toEqual([memory, "main", { executeNow: true, params: { from: "problemSolving", ismOutcome: outcome } }]);
    }
  });

  it("sends an interrupted ISM to main for the newer message", () => {
    expect(handBack(output("interrupted"), plain)).toEqual([memory, "main"]);
  });
});

describe("the recalled whisper", () => {
  const base = new WorkingMemory({ soulName: "Claudius" }).withMemory({ role: "user", content: "hi", name: "Tom" });

  it("is taken out of the memory and handed to the pipeline as its whisper", () => {
    const recalled = withDaimonicIntuition(base, { content: "They need assurance, not answers.", source: "Kothar" });
    const taken = takeRecall(recalled);
    expect(taken.whisper).toEqual({ content: "They need assurance, not answers.", source: "Kothar" });
    expect(taken.memory.memories.some((m) => m.region === DAIMONIC_REGION)).toBe(false);
    expect(taken.memory.length).toBe(1);
    // Handed on to a chained process, and only once.
    const again = withRecall(withRecall(taken.memory, taken.recall), taken.recall);
    expect(again.memories.filter((m) => m.region === DAIMONIC_REGION)).toHaveLength(1);
  });

  it("is absent when nothing was recalled", () => {
    const taken = takeRecall(base);
    expect(taken.whisper).toBeUndefined();
    expect(taken.memory).toBe(base);
  });

  it("keeps an unnamed daimon unnamed", () => {
    const taken = takeRecall(withDaimonicIntuition(base, "Look again."));
    expect(taken.whisper).toEqual({ content: "Look again." });
  });
});

describe("helpers", () => {
  it("a person's id: the bridge's user id when there is one, else the name", () => {
    expect(userIdOf({ name: "Tom", meta: { userId: "U123" } })).toBe("U123");
    expect(userIdOf({ name: "Tom", meta: { user_id: "U9" } })).toBe("U9");
    expect(userIdOf({ name: "Tom", meta: { userId: 5 } })).toBe("Tom");
    expect(userIdOf({ name: "Tom" })).toBe("Tom");
    expect(userIdOf({ name: "  " })).toBe("unknown");
  });

  it("trims old conversation, never context regions", () => {
    let memory = new WorkingMemory({ soulName: "Claudius" }).withRegion("pipelinePersona", { role: "system", content: "persona" });
    for (let i = 0; i < 10; i++) memory = memory.withMemory({ role: "user", content: `m${i}` });
    const trimmed = trimConversation(memory, 3);
    expect(trimmed.memories.map((m) => m.content)).toEqual(["persona", "m7", "m8", "m9"]);
    expect(trimConversation(memory, 50)).toBe(memory);
  });
});
