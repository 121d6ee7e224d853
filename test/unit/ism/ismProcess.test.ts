import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { regionOf } from "../../../runtime/cognition/Memory.ts";
import { runWithCognition } from "../../../runtime/cognition/CognitionContext.ts";
import { WorkingMemory } from "../../../runtime/cognition/WorkingMemory.ts";
import { createOfflineModel } from "../../../runtime/providers/offline.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import type { MentalProcess } from "../../../actors/vocabulary/MentalProcess.ts";
import { currentTurn, runInTurn } from "../../../actors/vocabulary/turnScope.ts";
import {
  DONE_ACTION,
  ISM_PROCESS,
  PLAYBOOK_REGION,
  buildChoicePrompt,
  checkChoice,
  isIsmProcess,
  ismMachine,
  implicitSemanticMachine,
  ismProcess,
  runIsm,
  type IsmAction,
} from "../../../actors/ism/index.ts";
import { choice, fakeTurn, memory, scriptedModel, withModel } from "./support.ts";

const actions: IsmAction[] = [
  { name: "Think", description: "Think it over", handleActionUse: (wm, _im, recurse) => recurse({ workingMemory: wm.withMonologue("thinking") }) },
  { name: "Wrap", description: "Close the conversation", handleActionUse: (wm) => [wm, "closing", { executeNow: true }] },
];

describe("ismProcess", () => {
  it("builds a mental process whose body is the ISM, marked for the soul machine", async () => {
    const process = ismProcess({ name: "problemSolving", goal: "Solve it", playbook: "Step by step", actions, maxLoops: 4 });
    expect(isIsmProcess(process)).toBe(true);
    expect(isIsmProcess(async () => memory())).toBe(false);
    expect(isIsmProcess("problemSolving")).toBe(false);
    expect(process.name).toBe("problemSolving");
    const marker = process[ISM_PROCESS];
    expect(marker.machine).toBe(ismMachine);
    expect(marker.config.maxLoops).toBe(4);

    // Called as a plain process, it runs the ISM and returns a process result.
    const returned = await withModel(scriptedModel([choice(["Think"], "first"), choice(["Wrap"], "done here")]), () =>
      process({ workingMemory: memory(), params: {} }),
    );
    expect(returned).toEqual([expect.any(WorkingMemory), "closing", { executeNow: true }]);
  });

  it("gives the soul machine what it needs to invoke the ISM machine itself, in the turn's context", async () => {
    const seen: boolean[] = [];
    const spy: IsmAction[] = [
      ...actions,
      {
        name: "Check",
        description: "Look around",
        handleActionUse: (wm, _im, recurse) => {
          seen.push(currentTurn() === turn);
          return recurse({ workingMemory: wm });
        },
      },
    ];
    const process = ismProcess({ goal: "Solve it", playbook: "Step by step", actions: spy });
    const turn = fakeTurn();
    const model = scriptedModel([choice(["Check"], "look"), choice(["Wrap"], "finish")]);
    // The soul builds the input inside the turn, but XState may run the machine from anywhere
    // (here: outside both the turn and the cognition context). Steps and handlers must still
    // see the turn and use the turn's models.
    const input = withModel(model, () => runInTurn(turn, () => process[ISM_PROCESS].input(memory())));
    expect(input.turn).toBe(turn);
    const output = await toPromise(createActor(process[ISM_PROCESS].machine, { input }).start());

    expect(output.outcome).toBe("transition");
    expect(model.requests).toHaveLength(2);
    expect(seen).toEqual([true]);
    const result = process[ISM_PROCESS].toProcessReturn(output);
    expect(result).toEqual([expect.any(WorkingMemory), "closing", { executeNow: true }]);
    expect(turn.logs.some((l) => l.message.includes("ISM ended: transition"))).toBe(true);
  });

  it("rejects a bad configuration when the blueprint loads", () => {
    expect(() => ismProcess({ goal: "", playbook: "p", actions })).toThrow(/goal/);
    expect(() => ismProcess({ goal: "g", playbook: "p", actions: [] })).toThrow(/actions/);
    expect(() => ismProcess({ goal: "g", playbook: "p", actions: [{ ...actions[0], name: DONE_ACTION }] })).toThrow(/reserved/);
  });
});

describe("implicitSemanticMachine inside a MentalProcess", () => {
  // Typed as the soul's MentalProcess: this file does not compile if the ISM's return value
  // stops being a process result.
  const expert: MentalProcess = async ({ workingMemory }) => workingMemory;
  const problemSolving: MentalProcess = async ({ workingMemory }) =>
    implicitSemanticMachine({
      workingMemory,
      goal: "Solve it",
      playbook: "Escalate when stuck",
      actions: [
        { name: "Think", description: "d", handleActionUse: (wm, _im, recurse) => recurse({ workingMemory: wm }) },
        // Open Souls spreads params into the options; ensoul also takes them under `params`.
        { name: "Escalate", description: "d", handleActionUse: (wm) => [wm, expert, { executeNow: true, wasProvoked: true }] },
      ],
    });

  it("returns the transition tuple, with spread params folded into params", async () => {
    const returned = await withModel(scriptedModel([choice(["Escalate"], "stuck")]), () =>
      problemSolving({ workingMemory: memory(), params: {} }),
    );
    expect(returned).toEqual([expect.any(WorkingMemory), expert, { executeNow: true, params: { wasProvoked: true } }]);
  });
});

describe("action choice", () => {
  it("renders the decision log the way the reference loop does", () => {
    const prompt = buildChoicePrompt({
      goal: "G",
      playbook: "P",
      actions: [{ name: "Think", description: "think" }],
      decisions: [
        { loop: 0, actions: ["Think"], reasoning: "need to", status: "acted", results: [{ action: "Think", result: "continued" }] },
      ],
    });
    expect(prompt).toContain("Loop 0: chose [Think] — need to → Think continued the loop");
    expect(prompt).not.toContain("(first iteration)");
  });

  it("checks names: case-insensitive match, DONE wins, unknown names rejected", () => {
    expect(checkChoice({ actions: [" think "], reasoning: "r" }, ["Think"])).toEqual({ kind: "act", actions: ["Think"], reasoning: "r" });
    expect(checkChoice({ actions: ["Think", "done"], reasoning: "r" }, ["Think"]).kind).toBe("done");
    const rejected = checkChoice({ actions: ["Think", "Fly"], reasoning: "r" }, ["Think"]);
    expect(rejected.kind).toBe("rejected");
    expect(rejected.kind === "rejected" && rejected.error).toContain('unknown action "Fly"; choose only from Think, DONE');
  });

  it("shows the model the action names as an enum in the requested JSON schema", async () => {
    const model = scriptedModel([choice(["DONE"], "ok")]);
    await withModel(model, () => runIsm({ goal: "g", playbook: "p", workingMemory: memory(), actions }));
    const format = model.requests[0].format;
    expect(format?.type).toBe("json");
    const schema = format?.type === "json" ? format.schema : {};
    expect(JSON.stringify(schema)).toContain(JSON.stringify(["Think", "Wrap", DONE_ACTION]));
  });

  it("runs end to end on the offline model, which answers inside the enum", async () => {
    const registry = new ModelRegistry();
    registry.register("offline", createOfflineModel());
    const out = await runWithCognition({ registry, defaultModel: "offline:echo" }, () =>
      runIsm({ goal: "g", playbook: "p", workingMemory: memory(), actions, maxLoops: 3 }),
    );
    expect(["done", "transition", "exhausted"]).toContain(out.outcome);
    expect(out.decisions.every((d) => d.status !== "rejected" && d.status !== "failed")).toBe(true);
    expect(out.workingMemory.memories.some((m) => regionOf(m) === PLAYBOOK_REGION)).toBe(false);
  });
});
