import { describe, expect, it } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { regionOf } from "../../../runtime/cognition/Memory.ts";
import { PLAYBOOK_REGION, ismMachine } from "../../../actors/ism/index.ts";
import { createInProcessOutlet, createSoul, createSoulMachine, MAX_EXECUTE_NOW, type Soul } from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said, until } from "../../support/soul/helpers.ts";
import { ismSoul, type IsmSoulControls } from "../../support/soul/ismSoul.ts";
import { choose, scriptedCognition, scriptedModel, type ScriptedModel } from "../../support/soul/scriptedModel.ts";

const env = useTestEnv();

interface Harness {
  soul: Soul;
  model: ScriptedModel;
  log: ReturnType<typeof record>;
  chunks: string[];
  inspected: InspectionEvent[];
  /** The soul's log lines (ISM decisions and outcomes among them). */
  logs(): string[];
}

/** A soul already greeted: resting in problemSolving, with the greeting committed as turn 1. */
async function greeted(controls: IsmSoulControls = {}, id = "sam"): Promise<Harness> {
  const model = scriptedModel({ dialog: ["Hi, I am Samantha. What is broken?"] });
  const outlet = createInProcessOutlet();
  const chunks: string[] = [];
  outlet.onChunk((c) => chunks.push(c.text));
  const inspected: InspectionEvent[] = [];
  const soul = createSoul({
    blueprint: ismSoul(controls),
    id,
    store: env.actor(id),
    outlet,
    cognition: scriptedCognition(model),
    inspect: (e) => inspected.push(e),
  });
  const log = record(soul);
  await soul.perceive(said("hello"));
  await soul.idle();
  expect(soul.state().process).toBe("problemSolving");
  return {
    soul,
    model,
    log,
    chunks,
    inspected,
    logs: () => log.events.flatMap((e) => (e.type === "log" ? [e.message] : [])),
  };
}

const values = (events: InspectionEvent[], actor: AnyActorRef | undefined) =>
  events.flatMap((e) => (e.type === "@xstate.snapshot" && e.actorRef === actor ? [(e.snapshot as { value?: unknown }).value] : []));

const committedMemory = (h: Harness) => h.soul.memory().workingMemory.memories.map((m) => m.content).join("\n");

describe("an ISM process as a process state whose sub-machine is the ISM", () => {
  it("compiles to running: preparing -> ism -> finishing, the ism state invoking the ISM machine", () => {
    const machine = createSoulMachine(ismSoul());
    const running = machine.root.states.problemSolving.states.running;
    expect(Object.keys(running.states)).toEqual(["preparing", "ism", "finishing"]);
    const [invoke] = running.states.ism.invoke;
    expect(invoke.src).toBe("ism");
    expect(invoke.id).toBe("ism");
    // The named implementation is the ISM machine itself, not a promise that runs it.
    expect(machine.implementations.actors.ism).toBe(ismMachine);
    // The blueprint-facing definition says the same.
    const config = machine.config.states?.problemSolving?.states?.running;
    expect(config?.initial).toBe("preparing");
    expect(JSON.stringify(config?.states?.ism?.invoke)).toContain('"src":"ism"');
    // Ordinary processes keep their one-step running state.
    for (const name of ["greeting", "expert", "main"]) {
      const state = machine.root.states[name].states.running;
      expect(Object.keys(state.states)).toEqual([]);
      expect(state.invoke.map((i) => i.src)).toEqual(["mentalProcess"]);
    }
    // Every declared hand-over of the ISM process is a transition out of `finishing`.
    const finishing = machine.getStateNodeById("soul.problemSolving.running.finishing");
    const targets = [...finishing.transitions.values()].flat().flatMap((t) => (t.target ?? []).map((n) => n.id));
    expect(targets).toEqual(
      expect.arrayContaining(["soul.problemSolving.running", "soul.main.running", "soul.expert.running", "soul.problemSolving.subprocesses"]),
    );
    expect(targets).not.toContain("soul.greeting.running");
  });

  it("done: the model declares the goal met; the turn commits and the soul stays", async () => {
    const h = await greeted();
    h.model.script("choice", choose(["DONE"], "nothing to do"));
    await h.soul.perceive(said("never mind, it works now"));
    await h.soul.idle();

    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 2 });
    expect(h.log.errors()).toEqual([]);
    expect(h.logs()).toContain("ISM ended: done after 0 loop(s)");
    expect(committedMemory(h)).toContain("never mind, it works now");
    expect(h.model.left()).toEqual({});

    // The soul went through the phases, and the ISM ran as the ism state's child.
    const soulValues = values(h.inspected, h.soul.actor).map((v) => JSON.stringify(v));
    expect(soulValues).toEqual(
      expect.arrayContaining([
        JSON.stringify({ problemSolving: { running: "preparing" } }),
        JSON.stringify({ problemSolving: { running: "ism" } }),
        JSON.stringify({ problemSolving: { running: "finishing" } }),
      ]),
    );
    const registered = h.inspected.find(
      (e) => e.type === "@xstate.actor" && e.actorRef !== h.soul.actor && (e.actorRef as { logic?: unknown }).logic === ismMachine,
    );
    const ism = registered?.actorRef as AnyActorRef | undefined;
    expect(ism?._parent).toBe(h.soul.actor);
    expect(ism?.id).toBe("ism");
    expect(registered?.rootId).toBe(h.soul.actor.sessionId);
    expect(values(h.inspected, ism)).toEqual(expect.arrayContaining(["selecting", "done"]));
    await h.soul.stop();
  });

  it("recalls a pending whisper into the ISM's deliberation, and the commit consumes it and leaves it out of memory", async () => {
    const h = await greeted();
    await h.soul.whisper("They already tried the obvious.", "Kothar");
    h.model.script("choice", choose(["DONE"], "nothing to do"));
    await h.soul.perceive(said("it still fails"));
    await h.soul.idle();

    const [choice] = h.model.calls.filter((c) => c.kind === "choice");
    const recalled = choice?.messages.filter((m) => m.content.includes("Kothar whispers: They already tried the obvious."));
    expect(recalled?.map((m) => m.role)).toEqual(["assistant"]);
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 2 });
    expect(committedMemory(h)).not.toContain("whispers");
    expect(h.soul.memory().soulMemory["daimonicWhisper"]).toBeNull();
    await h.soul.stop();
  });

  it("recurses, then responds: the answer streams through the outlet and lands in memory without the playbook", async () => {
    const h = await greeted();
    h.model.script("choice", choose(["Think"], "need to think"), choose(["Respond"], "ready"));
    h.model.script("monologue", "It is probably a stale cache.");
    h.model.script("dialog", "Try clearing the build cache.");
    await h.soul.perceive(said("my build fails with a type error"));
    await h.soul.idle();

    expect(h.log.said()).toEqual(["Hi, I am Samantha. What is broken?", "Try clearing the build cache."]);
    expect(h.chunks.join("")).toContain("Try clearing the build cache.");
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 2 });
    const memory = h.soul.memory().workingMemory;
    expect(committedMemory(h)).toContain("It is probably a stale cache.");
    expect(committedMemory(h)).toContain('Samantha said: "Try clearing the build cache."');
    expect(memory.memories.some((m) => regionOf(m) === PLAYBOOK_REGION)).toBe(false);
    // The second choice saw the first decision in its log.
    const choices = h.model.calls.filter((c) => c.kind === "choice");
    expect(choices[1].command).toContain("chose [Think]");
    expect(h.logs()).toContain("ISM ended: done after 2 loop(s)");
    expect(h.model.left()).toEqual({});
    await h.soul.stop();
  });

  it("Escalate transitions with executeNow: expert runs at once with the same perception, and the turn commits once", async () => {
    const expertSaw: string[] = [];
    const h = await greeted({ expertSaw });
    h.model.script("choice", choose(["Escalate"], "too hard for me"));
    h.model.script("dialog", "As a build engineer: pin your TypeScript version.");
    await h.soul.perceive(said("the compiler crashes with exit code 134"));
    await h.soul.idle();

    expect(expertSaw).toEqual(["the compiler crashes with exit code 134"]);
    expect(h.log.said().at(-1)).toBe("As a build engineer: pin your TypeScript version.");
    // One turn for the whole chain; expert then handed over to main for the next perception.
    expect(h.soul.state()).toMatchObject({ process: "main", previousProcess: "expert", turn: 2 });
    const transitions = h.log.events.flatMap((e) => (e.type === "transition" ? [[e.from, e.to, e.executeNow]] : []));
    expect(transitions).toEqual([
      ["greeting", "problemSolving", false],
      ["problemSolving", "expert", true],
      ["expert", "main", false],
    ]);
    const soulValues = values(h.inspected, h.soul.actor).map((v) => JSON.stringify(v));
    expect(soulValues.indexOf(JSON.stringify({ expert: "running" }))).toBeGreaterThan(
      soulValues.indexOf(JSON.stringify({ problemSolving: { running: "finishing" } })),
    );

    h.model.script("dialog", "Anything else?");
    await h.soul.perceive(said("thanks"));
    await h.soul.idle();
    expect(h.soul.state()).toMatchObject({ process: "main", turn: 3 });
    expect(h.model.left()).toEqual({});
    await h.soul.stop();
  });

  it("is interrupted by a perception queued while it deliberates; that perception runs next", async () => {
    const thinking = deferred();
    const release = deferred();
    let held = false;
    const h = await greeted({
      beforeThink: async () => {
        if (held) return;
        held = true;
        thinking.resolve();
        await release.promise;
      },
    });
    h.model.script("choice", choose(["Think"], "let me think"));
    h.model.script("monologue", "Hmm.");
    await h.soul.perceive(said("my build fails"));
    await thinking.promise;
    await h.soul.perceive(said("oh wait, also the tests fail"));
    expect(h.soul.state().pending).toBe(1);
    // The second perception gets its own deliberation, which finds the goal met.
    h.model.script("choice", choose(["DONE"], "they will tell me more"));
    release.resolve();
    await h.soul.idle();

    expect(h.logs().filter((l) => l.startsWith("ISM ended"))).toEqual(["ISM ended: interrupted after 1 loop(s)", "ISM ended: done after 0 loop(s)"]);
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 3, pending: 0 });
    // The interrupted turn kept what it had thought.
    expect(committedMemory(h)).toContain('Samantha thought: "Hmm."');
    expect(committedMemory(h)).toContain("oh wait, also the tests fail");
    expect(h.model.left()).toEqual({});
    await h.soul.stop();
  });

  it("is exhausted at maxLoops: the turn ends with the memory so far", async () => {
    const h = await greeted({ maxLoops: 2 });
    h.model.script("choice", choose(["Think"]), choose(["Think"]));
    h.model.script("monologue", "First thought.", "Second thought.");
    await h.soul.perceive(said("it is complicated"));
    await h.soul.idle();

    expect(h.logs()).toContain("ISM ended: exhausted after 2 loop(s)");
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 2 });
    expect(committedMemory(h)).toContain("Second thought.");
    expect(h.log.errors()).toEqual([]);
    await h.soul.stop();
  });

  it("a failed ISM is a logged soul event, never an error out of the soul: the turn commits the memory so far", async () => {
    const h = await greeted({
      beforeThink: () => {
        throw new Error("the knowledge base is down");
      },
    });
    h.model.script("choice", choose(["Think"]));
    await h.soul.perceive(said("why does it fail?"));
    await h.soul.idle();

    expect(h.log.errors()).toEqual([]);
    const failed = h.log.events.find((e) => e.type === "log" && e.data?.["ism"] === "failed");
    expect(failed?.type === "log" && failed.message).toContain("Think threw: the knowledge base is down");
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 2 });
    expect(committedMemory(h)).toContain("why does it fail?");
    expect(env.actor("sam").pendingInbox()).toEqual([]);

    // The soul goes on.
    h.model.script("choice", choose(["Respond"]));
    h.model.script("dialog", "Let us try again.");
    await h.soul.perceive(said("hello?"));
    await h.soul.idle();
    expect(h.log.said().at(-1)).toBe("Let us try again.");
    await h.soul.stop();
  });

  it("guards the ISM's transition like any process's: an undeclared successor fails the turn and nothing is committed", async () => {
    const h = await greeted({ escalateTo: () => "greeting" });
    h.model.script("choice", choose(["Think"]), choose(["Escalate"]));
    h.model.script("monologue", "Back to the start?");
    const before = h.soul.memory().workingMemory;
    await h.soul.perceive(said("start over"));
    await h.soul.idle();

    expect(h.log.errors()).toEqual([expect.stringContaining("process 'problemSolving' handed over to 'greeting', which it does not declare")]);
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 1 });
    expect(h.soul.memory().workingMemory).toBe(before);
    expect(env.actor("sam").inboxEntry(h.log.events.find((e) => e.type === "error")?.perceptionId ?? "")?.status).toBe("error");
    await h.soul.stop();
  });

  it(`keeps the executeNow limit (${MAX_EXECUTE_NOW} in a row) across ISM re-entries`, async () => {
    const h = await greeted({ escalateTo: () => "problemSolving" });
    h.model.script("choice", ...Array.from({ length: MAX_EXECUTE_NOW + 1 }, () => choose(["Escalate"], "again")));
    await h.soul.perceive(said("loop forever"));
    await h.soul.idle();

    expect(h.log.errors()).toEqual([expect.stringContaining(`executeNow chained more than ${MAX_EXECUTE_NOW} times`)]);
    expect(h.soul.state()).toMatchObject({ process: "problemSolving", turn: 1 });
    expect(h.model.left()).toEqual({});
    await h.soul.stop();
  });

  it("stopping the soul interrupts the ISM at once; the turn commits what it had", async () => {
    const thinking = deferred();
    const release = deferred();
    const h = await greeted({
      beforeThink: async () => {
        thinking.resolve();
        await release.promise;
      },
    });
    h.model.script("choice", choose(["Think"]));
    let lateStepAborted: boolean | undefined;
    h.model.script("monologue", (request) => {
      lateStepAborted = request.signal?.aborted;
      return "too late";
    });
    await h.soul.perceive(said("help"));
    await thinking.promise;
    // Resolves while Think is still held: the ISM did not wait for the handler.
    await h.soul.stop();
    expect(h.soul.state()).toMatchObject({ status: "stopped", process: "problemSolving", turn: 2 });
    expect(h.logs()).toContain("ISM interrupted: the soul is stopping");
    release.resolve();
    // The handler left behind runs on, but its step is aborted and nothing reaches the committed turn.
    await until(() => lateStepAborted !== undefined);
    expect(lateStepAborted).toBe(true);
    expect(committedMemory(h)).toContain("help");
    expect(committedMemory(h)).not.toContain("too late");
  });

  it("restores mid-conversation after the store is reopened, and deliberates where it left off", async () => {
    const h = await greeted();
    h.model.script("choice", choose(["Think"]), choose(["DONE"]));
    h.model.script("monologue", "Remember: they use pnpm.");
    await h.soul.perceive(said("I use pnpm"));
    await h.soul.idle();
    await h.soul.stop();
    await env.reopen();

    const model = scriptedModel({ choice: [choose(["Respond"])], dialog: ["Since you use pnpm: run pnpm store prune."] });
    const soul = createSoul({ blueprint: ismSoul(), id: "sam", store: env.actor("sam"), cognition: scriptedCognition(model) });
    const log = record(soul);
    expect(soul.state()).toMatchObject({ process: "problemSolving", previousProcess: "greeting", turn: 2 });
    expect(soul.actor.getSnapshot().value).toEqual({ problemSolving: "idle" });
    await soul.perceive(said("still broken"));
    await soul.idle();
    expect(log.said()).toEqual(["Since you use pnpm: run pnpm store prune."]);
    // The restored memory reached the model: the earlier thought is in the prompt.
    expect(model.calls[0].messages.map((m) => m.content).join("\n")).toContain("Remember: they use pnpm.");
    expect(soul.state()).toMatchObject({ process: "problemSolving", turn: 3 });
    await soul.stop();
  });
});
