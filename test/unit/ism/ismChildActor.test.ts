import { describe, expect, it } from "vitest";
import { createActor, setup, type InspectionEvent } from "xstate";
import { runInTurn } from "../../../actors/vocabulary/turnScope.ts";
import { runIsm, type IsmAction, type IsmOutput } from "../../../actors/ism/index.ts";
import { choice, fakeTurn, memory, scriptedModel, withModel } from "./support.ts";

/** Stands in for the soul machine: the ISM must appear in its actor system, as its child. */
const soulLike = setup({}).createMachine({ id: "soul", initial: "running", states: { running: {} } });

const actions: IsmAction[] = [
  { name: "Think", description: "Think", handleActionUse: (wm, _im, recurse) => recurse({ workingMemory: wm.withMonologue("hm") }) },
  { name: "Respond", description: "Answer", handleActionUse: (wm) => wm },
];

function stateValues(events: InspectionEvent[], ref: unknown): unknown[] {
  return events
    .filter((e) => e.type === "@xstate.snapshot" && e.actorRef === ref)
    .map((e) => (e.type === "@xstate.snapshot" ? (e.snapshot as { value?: unknown }).value : undefined));
}

describe.each([
  { startChild: true, how: "spawnChild starts the actor" },
  { startChild: false, how: "spawnChild only creates the actor" },
])("ISM as a child actor of the soul ($how)", ({ startChild }) => {
  it("shows the ism machine's states in the parent's inspection stream and reports its end to the parent", async () => {
    const events: InspectionEvent[] = [];
    const parent = createActor(soulLike, { inspect: (e) => events.push(e) }).start();
    const turn = fakeTurn({ parent, startChild });
    const model = scriptedModel([choice(["Think"], "first think"), choice(["Respond"], "then answer")]);

    const out = await withModel(model, () => runInTurn(turn, () => runIsm({ goal: "g", playbook: "p", workingMemory: memory(), actions })));

    expect(out.outcome).toBe("done");
    expect(turn.spawned).toHaveLength(1);
    const ism = turn.spawned[0];
    expect(ism._parent).toBe(parent);
    expect(ism.system).toBe(parent.system);

    // Registered in the soul's system, so the inspector lists it under the same root.
    const registered = events.find((e) => e.type === "@xstate.actor" && e.actorRef === ism);
    expect(registered?.rootId).toBe(parent.sessionId);

    // Its snapshots, with the machine's states, go through the parent's inspector.
    const values = stateValues(events, ism);
    expect(values).toEqual(expect.arrayContaining(["selecting", "acting", "done"]));
    expect(values.indexOf("acting")).toBeLessThan(values.lastIndexOf("done"));
    const last = events.filter((e) => e.type === "@xstate.snapshot" && e.actorRef === ism).at(-1);
    expect(last?.type === "@xstate.snapshot" && (last.snapshot as { machine?: { id: string } }).machine?.id).toBe("ism");

    // The parent is told the child finished, with the ISM's output: an XState child, not a bystander.
    const doneEvent = events.find(
      (e) => e.type === "@xstate.event" && e.actorRef === parent && e.event.type === `xstate.done.actor.${ism.id}`,
    );
    expect(doneEvent).toBeDefined();
    const output = doneEvent?.type === "@xstate.event" ? (doneEvent.event as { output?: IsmOutput }).output : undefined;
    expect(output?.outcome).toBe("done");
    expect(output?.decisions).toHaveLength(2);
    parent.stop();
  });
});

describe("ISM actor lifecycle", () => {
  it("runs as a standalone actor when there is no turn", async () => {
    const out = await withModel(scriptedModel([choice(["Respond"], "answer")]), () =>
      runIsm({ goal: "g", playbook: "p", workingMemory: memory(), actions }),
    );
    expect(out.outcome).toBe("done");
  });

  it("reports an ISM stopped from outside as interrupted, with the memory so far", async () => {
    // No parent here: XState refuses to stop a child directly; a soul stops it through its system.
    const turn = fakeTurn({ startChild: true });
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const slow: IsmAction = {
      name: "Think",
      description: "Think slowly",
      handleActionUse: async (wm, _im, recurse) => {
        turn.spawned[0].stop();
        await blocked;
        return recurse({ workingMemory: wm });
      },
    };
    const out = await withModel(scriptedModel([choice(["Think"], "slow")]), () =>
      runInTurn(turn, () => runIsm({ goal: "g", playbook: "p", workingMemory: memory(), actions: [slow] })),
    );
    release();
    expect(out.error).toBeUndefined();
    expect(out.outcome).toBe("interrupted");
    expect(out.decisions).toHaveLength(1);
  });
});
