import { describe, expect, it } from "vitest";
import { currentCognition } from "../../../runtime/cognition/CognitionContext.ts";
import { createCognitiveStep } from "../../../runtime/cognition/createCognitiveStep.ts";
import type { WorkingMemory } from "../../../runtime/cognition/WorkingMemory.ts";
import { currentTurn, runInTurn } from "../../../actors/vocabulary/turnScope.ts";
import { implicitSemanticMachine, runIsm, type IsmAction } from "../../../actors/ism/index.ts";
import { choice, fakeTurn, memory, perception, scriptedModel, withModel } from "./support.ts";

const base = { goal: "Help the user", playbook: "Be brief." };

function thinkAction(onCall: () => void = () => undefined): IsmAction {
  return {
    name: "Think",
    description: "Think about it",
    handleActionUse: (wm, _im, recurse) => {
      onCall();
      return recurse({ workingMemory: wm.withMonologue("a thought") });
    },
  };
}

const respond: IsmAction = {
  name: "Respond",
  description: "Answer",
  handleActionUse: (wm) => wm.withMemory({ role: "assistant", content: "answer" }),
};

describe("ISM robustness", () => {
  it("is interrupted at the next loop by a perception that arrives while it runs", async () => {
    const turn = fakeTurn();
    const model = scriptedModel([], choice(["Think"], "keep thinking"));
    let calls = 0;
    const out = await withModel(model, () =>
      runInTurn(turn, () =>
        runIsm({
          ...base,
          workingMemory: memory(),
          actions: [
            thinkAction(() => {
              calls++;
              turn.pending.push(perception("are you there?"));
            }),
          ],
        }),
      ),
    );
    expect(out.outcome).toBe("interrupted");
    expect(calls).toBe(1);
    expect(model.requests).toHaveLength(1);
    expect(out.loops).toBe(1);
    // The memory built before the interruption is kept.
    expect(out.workingMemory.memories.at(-1)?.content).toBe("a thought");
    expect(turn.logs.some((l) => l.message.includes("ISM ended: interrupted"))).toBe(true);
  });

  it("does not start deliberating when a perception is already pending", async () => {
    const turn = fakeTurn();
    turn.pending.push(perception("hello?"));
    const model = scriptedModel([]);
    const out = await withModel(model, () =>
      runInTurn(turn, () => runIsm({ ...base, workingMemory: memory(), actions: [respond] })),
    );
    expect(out.outcome).toBe("interrupted");
    expect(model.requests).toHaveLength(0);
  });

  it("fails without throwing when the model ignores the format twice, and logs why", async () => {
    const turn = fakeTurn();
    const model = scriptedModel(["I think I will think.", "Definitely thinking!"]);
    const input = memory();
    const run = () => runInTurn(turn, () => runIsm({ ...base, workingMemory: input, actions: [thinkAction(), respond] }));
    const out = await withModel(model, run);
    expect(out.outcome).toBe("failed");
    expect(model.requests).toHaveLength(2);
    expect(out.error).toMatch(/no usable action choice/);
    expect(out.decisions).toEqual([expect.objectContaining({ loop: 0, status: "failed" })]);
    expect(out.workingMemory.memories.map((m) => m.content)).toEqual(input.memories.map((m) => m.content));
    expect(turn.logs.some((l) => l.message.includes("no usable choice"))).toBe(true);
    expect(turn.logs.some((l) => l.message.includes("ISM ended: failed"))).toBe(true);

    // The Open Souls entry point returns the memory as it was, rather than throwing.
    const returned = await withModel(scriptedModel(["garbage", "more garbage"]), () =>
      implicitSemanticMachine({ ...base, workingMemory: input, actions: [respond] }),
    );
    expect((returned as WorkingMemory).memories.map((m) => m.content)).toEqual(input.memories.map((m) => m.content));
  });

  it("succeeds when a garbage answer is followed by a valid one", async () => {
    const model = scriptedModel(["not json at all", choice(["Respond"], "answering now")]);
    const out = await withModel(model, () => runIsm({ ...base, workingMemory: memory(), actions: [thinkAction(), respond] }));
    expect(out.outcome).toBe("done");
    expect(model.requests).toHaveLength(2);
    expect(out.workingMemory.memories.at(-1)?.content).toBe("answer");
  });

  it("logs an unknown action name and asks again once, with the rejection in the prompt", async () => {
    const turn = fakeTurn();
    const model = scriptedModel([choice(["Dance"], "for fun"), choice(["Respond"], "ok, answering")]);
    const out = await withModel(model, () =>
      runInTurn(turn, () => runIsm({ ...base, workingMemory: memory(), actions: [thinkAction(), respond] })),
    );
    expect(out.outcome).toBe("done");
    expect(model.requests).toHaveLength(2);
    expect(out.decisions.map((d) => [d.loop, d.status])).toEqual([
      [0, "rejected"],
      [0, "acted"],
    ]);
    expect(out.decisions[0].error).toContain('unknown action "Dance"');
    expect(model.commands[1]).toContain("Loop 0: chose [Dance] — for fun (rejected: unknown action \"Dance\"");
    expect(turn.logs.some((l) => l.message.includes('unknown action "Dance"'))).toBe(true);
  });

  it("fails after an unknown action name twice, asking the model only twice", async () => {
    const model = scriptedModel([choice(["Dance"], "fun"), choice(["Sing"], "more fun")], choice(["Respond"], "never asked"));
    const out = await withModel(model, () => runIsm({ ...base, workingMemory: memory(), actions: [respond] }));
    expect(out.outcome).toBe("failed");
    expect(model.requests).toHaveLength(2);
    expect(out.error).toContain('"Sing"');
    expect(out.decisions.map((d) => d.status)).toEqual(["rejected", "rejected"]);
  });

  it("ends with failed, the error recorded and the memory so far, when a handler throws", async () => {
    const turn = fakeTurn();
    const model = scriptedModel([choice(["Think"], "first"), choice(["Boom"], "then this")]);
    const boom: IsmAction = {
      name: "Boom",
      description: "Explodes",
      handleActionUse: () => {
        throw new Error("the tool is down");
      },
    };
    const out = await withModel(model, () =>
      runInTurn(turn, () => runIsm({ ...base, workingMemory: memory(), actions: [thinkAction(), boom] })),
    );
    expect(out.outcome).toBe("failed");
    expect(out.error).toBe("Boom threw: the tool is down");
    expect(out.decisions[1]).toMatchObject({ status: "acted", error: "Boom threw: the tool is down" });
    expect(out.decisions[1].results).toEqual([{ action: "Boom", result: "threw" }]);
    expect(out.workingMemory.memories.at(-1)?.content).toBe("a thought");
    expect(turn.logs.some((l) => l.message.includes("the tool is down"))).toBe(true);
  });

  it("treats a handler that returns nothing usable as failed", async () => {
    const lazy = { name: "Lazy", description: "forgets to return", handleActionUse: () => undefined } as unknown as IsmAction;
    const out = await withModel(scriptedModel([choice(["Lazy"], "try")]), () =>
      runIsm({ ...base, workingMemory: memory(), actions: [lazy] }),
    );
    expect(out.outcome).toBe("failed");
    expect(out.error).toMatch(/Lazy returned undefined/);
  });

  it("fails a bad configuration without asking the model", async () => {
    const model = scriptedModel([]);
    const out = await withModel(model, () =>
      runIsm({ ...base, workingMemory: memory(), actions: [respond, { ...respond, name: "respond" }] }),
    );
    expect(out.outcome).toBe("failed");
    expect(out.error).toMatch(/two actions are named/);
    expect(model.requests).toHaveLength(0);

    const reserved = await withModel(model, () =>
      runIsm({ ...base, workingMemory: memory(), actions: [{ ...respond, name: "DONE" }] }),
    );
    expect(reserved.error).toMatch(/reserved/);
  });

  it("runs every handler inside the caller's turn scope and cognition context, on every loop", async () => {
    const turn = fakeTurn();
    const model = scriptedModel([
      choice(["Think"], "one"),
      "a model thought", // the handler's own cognitive step
      choice(["Think"], "two"),
      "another thought",
      choice(["DONE"], "done"),
    ]);
    const monologue = createCognitiveStep((instruction: string) => ({ command: instruction }), { name: "monologue" });
    const seen: { turn: boolean; model: string }[] = [];
    const out = await withModel(model, () =>
      runInTurn(turn, () =>
        runIsm({
          ...base,
          workingMemory: memory(),
          actions: [
            {
              name: "Think",
              description: "Think with the model",
              handleActionUse: async (wm, _im, recurse) => {
                seen.push({ turn: currentTurn() === turn, model: currentCognition().defaultModel });
                const [next] = await monologue(wm, "Think about it");
                return recurse({ workingMemory: next });
              },
            },
          ],
        }),
      ),
    );
    expect(out.outcome).toBe("done");
    expect(seen).toEqual([
      { turn: true, model: "scripted:x" },
      { turn: true, model: "scripted:x" },
    ]);
    expect(out.workingMemory.memories.slice(-2).map((m) => m.content)).toEqual(["a model thought", "another thought"]);
  });

  it("treats a cancelled turn as an interruption", async () => {
    const turn = fakeTurn();
    const model = scriptedModel([], choice(["Think"], "again"));
    const out = await withModel(model, () =>
      runInTurn(turn, () =>
        runIsm({ ...base, workingMemory: memory(), actions: [thinkAction(() => turn.controller.abort())] }),
      ),
    );
    expect(out.outcome).toBe("interrupted");
    expect(model.requests).toHaveLength(1);
  });
});

describe("ISM interruption from outside", () => {
  it("stops at once, mid-handler, when the turn is cancelled", async () => {
    const turn = fakeTurn();
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let finishedHandler = false;
    const slow: IsmAction = {
      name: "Think",
      description: "Think slowly",
      handleActionUse: async (wm, _im, recurse) => {
        turn.controller.abort();
        await blocked;
        finishedHandler = true;
        return recurse({ workingMemory: wm.withMonologue("late thought") });
      },
    };
    const out = await withModel(scriptedModel([choice(["Think"], "slowly")]), () =>
      runInTurn(turn, () => runIsm({ ...base, workingMemory: memory(), actions: [slow] })),
    );
    expect(out.outcome).toBe("interrupted");
    expect(finishedHandler).toBe(false);
    expect(out.workingMemory.memories.some((m) => m.content === "late thought")).toBe(false);
    expect(turn.logs.some((l) => l.message.includes("ISM interrupted: the turn was cancelled"))).toBe(true);
    release();
  });
});
