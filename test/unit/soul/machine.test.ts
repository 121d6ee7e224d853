import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { createSoul, createSoulMachine, defineSoul, type MentalProcess } from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

const p: MentalProcess = async ({ workingMemory }) => workingMemory;
const q: MentalProcess = async ({ workingMemory }) => [workingMemory, p];
const r: MentalProcess = async ({ workingMemory }) => workingMemory;
const definition = {
  name: "Graph",
  persona: "",
  initialProcess: p,
  processes: { greeting: { process: p, next: ["chat"] }, chat: { process: q, next: ["greeting", "deep"] }, deep: r },
};

const targetsOf = (transitions: readonly { target?: readonly { id: string }[] | undefined }[] | undefined) =>
  (transitions ?? []).flatMap((t) => (t.target ?? []).map((node) => node.id));

describe("soul machine", () => {
  it("has one state per process with idle, running and subprocesses, and draws every declared hand-over", () => {
    for (const subprocesses of [undefined, [async function sub({ workingMemory }: Parameters<MentalProcess>[0]) { return workingMemory; }]]) {
      const machine = createSoulMachine(defineSoul({ ...definition, ...(subprocesses ? { subprocesses } : {}) }));
      expect(Object.keys(machine.definition.states)).toEqual(["greeting", "chat", "deep", "routing", "returning", "stopped"]);
      for (const name of ["greeting", "chat", "deep"]) {
        expect(Object.keys(machine.definition.states[name].states)).toEqual(["idle", "running", "subprocesses"]);
      }
      const running = machine.getStateNodeById("soul.chat.running");
      const executeNowTargets = targetsOf([...running.transitions.values()].flat());
      expect(executeNowTargets).toEqual(
        expect.arrayContaining(["soul.chat.running", "soul.greeting.running", "soul.deep.running", "soul.chat.subprocesses", "soul.returning"]),
      );
      expect(executeNowTargets).not.toContain("soul.greeting.idle");
      const handOver = machine.getStateNodeById("soul.chat.subprocesses");
      const handOverTargets = targetsOf([...(handOver.always ?? []), ...[...handOver.transitions.values()].flat()]);
      expect(handOverTargets).toEqual(expect.arrayContaining(["soul.chat.idle", "soul.greeting.idle", "soul.deep.idle"]));
      // deep declares no successors: it can only stay.
      const deepTargets = targetsOf([...(machine.getStateNodeById("soul.deep.subprocesses").always ?? []), ...[...machine.getStateNodeById("soul.deep.subprocesses").transitions.values()].flat()]);
      expect(deepTargets.filter((t) => t.endsWith(".idle"))).toEqual(["soul.deep.idle"]);
    }
  });

  it("is plain data that serialises, with named implementations", () => {
    const machine = createSoulMachine(defineSoul(definition));
    const json = JSON.stringify(machine.definition);
    expect(json).toContain('"type":"executeNowTo"');
    expect(json).toContain('"src":"mentalProcess"');
  });

  it("reports to an inspector and rests in an idle state between turns", async () => {
    const inspected: InspectionEvent[] = [];
    const soul = createSoul({ blueprint: defineSoul(definition), id: "g", store: env.actor("g"), inspect: (e) => inspected.push(e) });
    await soul.perceive(said("hi"));
    await soul.idle();
    expect(soul.actor.getSnapshot().value).toEqual({ greeting: "idle" });
    const values = inspected.flatMap((e) => (e.type === "@xstate.snapshot" && e.actorRef === soul.actor ? [JSON.stringify((e.snapshot as unknown as { value: unknown }).value)] : []));
    expect(values).toContain(JSON.stringify({ greeting: "running" }));
    const stored = env.actor("g").loadState()?.snapshot as { value: unknown; context: { queue: unknown } };
    expect(stored.value).toEqual({ greeting: "idle" });
    // Stored as JSON shows it (PerceptionQueue.toJSON): nothing waits at a turn boundary.
    expect(stored.context.queue).toEqual({ length: 0, next: [] });
    await soul.stop();
    expect(soul.state().status).toBe("stopped");
    await expect(soul.perceive(said("late"))).rejects.toThrow(/is stopped/);
  });
});
