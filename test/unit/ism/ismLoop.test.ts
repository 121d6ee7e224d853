import { describe, expect, it, vi } from "vitest";
import { regionOf } from "../../../runtime/cognition/Memory.ts";
import { WorkingMemory } from "../../../runtime/cognition/WorkingMemory.ts";
import {
  DECISIONS_REGION,
  PLAYBOOK_REGION,
  implicitSemanticMachine,
  runIsm,
  type IsmAction,
} from "../../../actors/ism/index.ts";
import { choice, memory, scriptedModel, withModel } from "./support.ts";

const GOAL = "Understand the user's problem and help solve it";
const PLAYBOOK = "Think before answering; answer once you understand.";

function regions(wm: WorkingMemory): string[] {
  return wm.memories.map(regionOf);
}

describe("ISM loop", () => {
  it("ends with done when the model answers DONE at the first loop, returning the memory", async () => {
    const model = scriptedModel([choice(["DONE"], "nothing to do")]);
    const think = vi.fn<IsmAction["handleActionUse"]>();
    const input = memory();
    const result = await withModel(model, () =>
      implicitSemanticMachine({
        workingMemory: input,
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [{ name: "Think", description: "Think about the problem", handleActionUse: think }],
      }),
    );

    expect(result).toBeInstanceOf(WorkingMemory);
    const wm = result as WorkingMemory;
    expect(wm.memories.map((m) => m.content)).toEqual(input.memories.map((m) => m.content));
    expect(regions(wm)).not.toContain(PLAYBOOK_REGION);
    expect(think).not.toHaveBeenCalled();
    expect(model.requests).toHaveLength(1);

    // The choice ran on the memory with the playbook region, and the prompt has every part.
    const sent = model.requests[0].messages.slice(0, -1); // all but the choice command itself
    expect(sent.some((m) => m.role === "system" && m.content.includes(PLAYBOOK) && m.content.includes(GOAL))).toBe(true);
    const prompt = model.commands[0];
    for (const part of [GOAL, PLAYBOOK, "**Think**: Think about the problem", "**DONE**", "(first iteration)"]) {
      expect(prompt).toContain(part);
    }
    expect(prompt).toMatch(/do not repeat an action whose result is already in the decision log/i);
  });

  it("recurses: Think then Respond, two loops, the second prompt carries the first decision", async () => {
    const model = scriptedModel([
      choice(["Think"], "I need to understand the type error first"),
      choice(["Respond"], "I know the fix now"),
    ]);
    const seenByRespond: string[] = [];
    const actions: IsmAction[] = [
      {
        name: "Think",
        description: "Think about the problem",
        handleActionUse: (wm, im, recurse) => {
          const thought = wm.withMonologue("The error is a missing import.");
          return recurse({ workingMemory: thought, internalMemory: im });
        },
      },
      {
        name: "Respond",
        description: "Share findings with the user",
        handleActionUse: (wm) => {
          seenByRespond.push(...wm.memories.map((m) => m.content));
          return wm.withMemory({ role: "assistant", content: "Add the missing import." });
        },
      },
    ];

    const out = await withModel(model, () =>
      runIsm({ workingMemory: memory(), goal: GOAL, playbook: PLAYBOOK, actions }),
    );

    expect(out.outcome).toBe("done");
    expect(out.loops).toBe(2);
    expect(out.decisions.map((d) => [d.loop, d.actions, d.reasoning, d.status])).toEqual([
      [0, ["Think"], "I need to understand the type error first", "acted"],
      [1, ["Respond"], "I know the fix now", "acted"],
    ]);
    expect(out.decisions[0].results).toEqual([{ action: "Think", result: "continued" }]);
    expect(out.decisions[1].results).toEqual([{ action: "Respond", result: "ended" }]);

    expect(model.commands[0]).toContain("(first iteration)");
    expect(model.commands[1]).toContain("Loop 0: chose [Think] — I need to understand the type error first");
    expect(model.commands[1]).not.toContain("(first iteration)");

    // Respond worked on Think's memory, which still had the playbook in it.
    expect(seenByRespond).toContain("The error is a missing import.");
    expect(seenByRespond.some((c) => c.includes(PLAYBOOK))).toBe(true);
    // The returned memory keeps the work and drops the playbook region.
    const contents = out.workingMemory.memories.map((m) => m.content);
    expect(contents.slice(-2)).toEqual(["The error is a missing import.", "Add the missing import."]);
    expect(regions(out.workingMemory)).not.toContain(PLAYBOOK_REGION);
    // The decision log is mirrored into the internal memory.
    const mirrored = out.internalMemory.memories.filter((m) => regionOf(m) === DECISIONS_REGION);
    expect(mirrored.map((m) => m.content)).toEqual([
      expect.stringContaining("Loop 0: chose [Think]"),
      expect.stringContaining("Loop 1: chose [Respond]"),
    ]);
  });

  it("ends with a transition when a handler returns [memory, process, { executeNow }]", async () => {
    const actions: IsmAction[] = [
      {
        name: "Escalate",
        description: "The problem needs a specialist",
        handleActionUse: (wm) => [wm.withMonologue("Escalating."), "expert", { executeNow: true }],
      },
    ];
    const run = () => runIsm({ workingMemory: memory(), goal: GOAL, playbook: PLAYBOOK, actions });
    const out = await withModel(scriptedModel([choice(["Escalate"], "beyond me")]), run);
    expect(out.outcome).toBe("transition");
    expect(out.next).toEqual({ process: "expert", executeNow: true });
    expect(out.decisions[0].results).toEqual([{ action: "Escalate", result: "transitioned" }]);

    const returned = await withModel(scriptedModel([choice(["Escalate"], "beyond me")]), () =>
      implicitSemanticMachine({ workingMemory: memory(), goal: GOAL, playbook: PLAYBOOK, actions }),
    );
    expect(Array.isArray(returned)).toBe(true);
    const [wm, process, options] = returned as [WorkingMemory, "expert", { executeNow?: boolean }];
    expect(process).toBe("expert");
    expect(options).toEqual({ executeNow: true });
    expect(wm.memories.at(-1)?.content).toBe("Escalating.");
    expect(regions(wm)).not.toContain(PLAYBOOK_REGION);
  });

  it("passes a process function and params through a transition", async () => {
    const expertProcess = async ({ workingMemory }: { workingMemory: WorkingMemory }) => workingMemory;
    const returned = await withModel(scriptedModel([choice(["Escalate"], "specialist")]), () =>
      implicitSemanticMachine({
        workingMemory: memory(),
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [
          {
            name: "Escalate",
            description: "hand over",
            handleActionUse: (wm) => [wm, expertProcess, { params: { topic: "types" } }],
          },
        ],
      }),
    );
    expect(returned).toEqual([expect.any(WorkingMemory), expertProcess, { params: { topic: "types" } }]);
  });

  it("stops with exhausted at maxLoops: a model that always picks Think runs Think exactly maxLoops times", async () => {
    const model = scriptedModel([], choice(["Think"], "more thinking"));
    let calls = 0;
    const out = await withModel(model, () =>
      runIsm({
        workingMemory: memory(),
        goal: GOAL,
        playbook: PLAYBOOK,
        maxLoops: 3,
        actions: [
          {
            name: "Think",
            description: "Think",
            handleActionUse: (wm, _im, recurse) => {
              calls++;
              return recurse({ workingMemory: wm.withMonologue(`thought ${calls}`) });
            },
          },
        ],
      }),
    );
    expect(out.outcome).toBe("exhausted");
    expect(calls).toBe(3);
    expect(model.requests).toHaveLength(3);
    expect(out.loops).toBe(3);
    expect(out.decisions).toHaveLength(3);
    expect(out.workingMemory.memories.slice(-3).map((m) => m.content)).toEqual(["thought 1", "thought 2", "thought 3"]);
    // The third prompt lists both earlier decisions, so the model can see it is looping.
    expect(model.commands[2]).toContain("Loop 0: chose [Think] — more thinking");
    expect(model.commands[2]).toContain("Loop 1: chose [Think] — more thinking");
  });

  it("defaults maxLoops to 5", async () => {
    const model = scriptedModel([], choice(["Think"], "again"));
    const out = await withModel(model, () =>
      runIsm({
        workingMemory: memory(),
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [{ name: "Think", description: "Think", handleActionUse: (wm, _im, r) => r({ workingMemory: wm }) }],
      }),
    );
    expect(out.outcome).toBe("exhausted");
    expect(out.loops).toBe(5);
  });

  it("runs several chosen actions in order in one loop, each on the memory the previous left", async () => {
    const order: string[] = [];
    const out = await withModel(scriptedModel([choice(["think", "Respond", "Think"], "both at once")]), () =>
      runIsm({
        workingMemory: memory(),
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [
          {
            name: "Think",
            description: "Think",
            handleActionUse: (wm, _im, recurse) => {
              order.push("Think");
              return recurse({ workingMemory: wm.withMonologue("thought") });
            },
          },
          {
            name: "Respond",
            description: "Respond",
            handleActionUse: (wm) => {
              order.push(`Respond after ${wm.memories.at(-1)?.content}`);
              return wm.withMemory({ role: "assistant", content: "answer" });
            },
          },
        ],
      }),
    );
    expect(out.outcome).toBe("done");
    expect(order).toEqual(["Think", "Respond after thought"]);
    expect(out.loops).toBe(1);
    // Names are matched ignoring case and reported as the blueprint spells them.
    expect(out.decisions[0].actions).toEqual(["Think", "Respond", "Think"]);
    expect(out.decisions[0].results).toEqual([
      { action: "Think", result: "continued" },
      { action: "Respond", result: "ended" },
      { action: "Think", result: "skipped" },
    ]);
  });

  it("puts back a playbook region the caller already had instead of removing it", async () => {
    const outer = memory().withRegion(PLAYBOOK_REGION, { role: "system", content: "outer playbook" });
    const out = await withModel(scriptedModel([choice(["DONE"], "ok")]), () =>
      runIsm({
        workingMemory: outer,
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [{ name: "Think", description: "Think", handleActionUse: (wm) => wm }],
      }),
    );
    const playbooks = out.workingMemory.memories.filter((m) => regionOf(m) === PLAYBOOK_REGION);
    expect(playbooks.map((m) => m.content)).toEqual(["outer playbook"]);
  });

  it("keeps the playbook in view when a handler recurses with a memory built without it", async () => {
    const model = scriptedModel([choice(["Reset"], "start over"), choice(["DONE"], "ok")]);
    await withModel(model, () =>
      runIsm({
        workingMemory: memory(),
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [
          {
            name: "Reset",
            description: "Continue from the internal memory only",
            handleActionUse: (_wm, im, recurse) => recurse({ workingMemory: im.withMonologue("fresh start") }),
          },
        ],
      }),
    );
    const second = model.requests[1].messages.slice(0, -1); // all but the choice command itself
    expect(second.some((m) => m.role === "system" && m.content.includes(PLAYBOOK))).toBe(true);
    expect(second.some((m) => m.content === "fresh start")).toBe(true);
  });

  it("accepts the working memory as internal memory (Open Souls style) without leaking the decision log", async () => {
    const model = scriptedModel([choice(["Think"], "think first"), choice(["DONE"], "enough")]);
    const wm = memory();
    const out = await withModel(model, () =>
      runIsm({
        workingMemory: wm,
        internalMemory: wm,
        goal: GOAL,
        playbook: PLAYBOOK,
        actions: [
          {
            name: "Think",
            description: "Think",
            handleActionUse: (_w, im, recurse) => {
              const thought = im.withMonologue("thought");
              return recurse({ workingMemory: thought, internalMemory: thought });
            },
          },
        ],
      }),
    );
    expect(out.outcome).toBe("done");
    expect(regions(out.workingMemory)).not.toContain(DECISIONS_REGION);
    expect(regions(out.workingMemory)).not.toContain(PLAYBOOK_REGION);
    expect(out.workingMemory.memories.at(-1)?.content).toBe("thought");
    expect(regions(out.internalMemory)).toContain(DECISIONS_REGION);
  });
});
