import { describe, expect, it } from "vitest";
import {
  createSoul,
  defineSoul,
  MAX_EXECUTE_NOW,
  SoulBlueprintError,
  useActions,
  usePerceptions,
  useProcessManager,
  type MentalProcess,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

/** Speaks `${process}:${content}:${params}` so a test can see which process ran for what. */
const speakingProcess =
  (name: string, decide: (content: string) => ReturnType<MentalProcess> | undefined = () => undefined): MentalProcess =>
  async ({ workingMemory, params }) => {
    const { invokingPerception } = usePerceptions();
    useActions().speak(`${name}:${invokingPerception.content}:${JSON.stringify(params)}`);
    return (await decide(invokingPerception.content)) ?? workingMemory;
  };

describe("process transitions", () => {
  it("handles all three return shapes: stay, hand over, hand over and execute now", async () => {
    const calm: MentalProcess = speakingProcess("calm");
    const angry: MentalProcess = speakingProcess("angry", () => undefined);
    const greeting: MentalProcess = async (args) => {
      const { invokingPerception } = usePerceptions();
      useActions().speak(`greeting:${invokingPerception.content}`);
      if (invokingPerception.content === "stay") return args.workingMemory;
      if (invokingPerception.content === "rage") return [args.workingMemory, angry, { executeNow: true, params: { wasProvoked: true } }];
      return [args.workingMemory, calm, { mood: "fine" }];
    };
    const blueprint = defineSoul({
      name: "Tester",
      persona: "A test soul.",
      initialProcess: "greeting",
      processes: {
        greeting: { process: greeting, next: ["calm", "angry"] },
        calm: { process: calm, next: ["greeting"] },
        angry,
      },
    });

    const soul = createSoul({ blueprint, id: "t1", store: env.actor("t1") });
    const log = record(soul);
    await soul.perceive(said("stay"));
    await soul.idle();
    expect(soul.state().process).toBe("greeting");

    // [memory, process, params]: the next perception goes to calm, with the Open Souls-style spread params.
    await soul.perceive(said("hello"));
    await soul.idle();
    expect(soul.state().process).toBe("calm");
    await soul.perceive(said("again"));
    await soul.idle();
    expect(log.said()).toEqual(["greeting:stay", "greeting:hello", 'calm:again:{"mood":"fine"}']);

    // executeNow: a second soul, so greeting is current again; angry runs for the same perception.
    const other = createSoul({ blueprint, id: "t2", store: env.actor("t2") });
    const otherLog = record(other);
    await other.perceive(said("rage"));
    await other.idle();
    expect(otherLog.said()).toEqual(["greeting:rage", 'angry:rage:{"wasProvoked":true}']);
    expect(other.state()).toMatchObject({ process: "angry", previousProcess: "greeting", turn: 1 });
    // One turn, one commit: the inbox entry is done and the stored state is in angry.
    expect(env.actor("t2").loadState()?.currentProcess).toBe("angry");
    await soul.stop();
    await other.stop();
  });

  it("accepts a process named by string and returns by name", async () => {
    const b: MentalProcess = speakingProcess("b");
    const a: MentalProcess = async ({ workingMemory }) => [workingMemory, "b"];
    const blueprint = defineSoul({ name: "N", persona: "", initialProcess: a, processes: { a: { process: a, next: ["b"] }, b } });
    const soul = createSoul({ blueprint, id: "n", store: env.actor("n") });
    await soul.perceive(said("x"));
    await soul.idle();
    expect(soul.state().process).toBe("b");
    await soul.stop();
  });

  it("counts invocations per process, resets the count on a switch, and reports the previous process by identity", async () => {
    const seen: { process: string; count: number; previousIsGreeting: boolean; previous: string | undefined }[] = [];
    let greeting!: MentalProcess;
    const observe = (process: string) => {
      const { invocationCount, previousMentalProcess, previousMentalProcessName } = useProcessManager();
      seen.push({ process, count: invocationCount, previousIsGreeting: previousMentalProcess === greeting, previous: previousMentalProcessName });
    };
    const conversation: MentalProcess = async ({ workingMemory }) => {
      observe("conversation");
      const { invokingPerception } = usePerceptions();
      return invokingPerception.content === "bye" ? [workingMemory, greeting] : workingMemory;
    };
    greeting = async ({ workingMemory }) => {
      observe("greeting");
      return [workingMemory, conversation];
    };
    const blueprint = defineSoul({
      name: "Counter",
      persona: "",
      initialProcess: greeting,
      processes: { greeting: { process: greeting, next: ["conversation"] }, conversation: { process: conversation, next: ["greeting"] } },
    });
    const soul = createSoul({ blueprint, id: "c", store: env.actor("c") });
    for (const text of ["hi", "a", "b", "bye", "hi again", "c"]) await soul.perceive(said(text));
    await soul.idle();
    expect(seen).toEqual([
      { process: "greeting", count: 0, previousIsGreeting: false, previous: undefined },
      { process: "conversation", count: 0, previousIsGreeting: true, previous: "greeting" },
      { process: "conversation", count: 1, previousIsGreeting: true, previous: "greeting" },
      { process: "conversation", count: 2, previousIsGreeting: true, previous: "greeting" },
      { process: "greeting", count: 0, previousIsGreeting: false, previous: "conversation" },
      { process: "conversation", count: 0, previousIsGreeting: true, previous: "greeting" },
    ]);
    expect(soul.state().invocationCounts).toMatchObject({ conversation: 1, greeting: 1 });
    await soul.stop();
  });

  it("chains executeNow and stops a runaway chain after the limit with a clear error, then serves the next perception", async () => {
    let runs = 0;
    const loop: MentalProcess = async ({ workingMemory }) => {
      runs++;
      const { invokingPerception } = usePerceptions();
      if (invokingPerception.content === "loop") return [workingMemory, loop, { executeNow: true }];
      useActions().speak(`served ${invokingPerception.content}`);
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "Loop", persona: "", initialProcess: loop, processes: { loop } });
    const soul = createSoul({ blueprint, id: "l", store: env.actor("l") });
    const log = record(soul);
    const looping = await soul.perceive(said("loop"));
    await soul.perceive(said("next"));
    await soul.idle();
    expect(runs).toBe(MAX_EXECUTE_NOW + 1 + 1);
    expect(log.errors()).toHaveLength(1);
    expect(log.errors()[0]).toMatch(/executeNow chained more than 10 times/);
    const entry = env.actor("l").inboxEntry(looping.id);
    expect(entry?.status).toBe("error");
    expect(entry?.error).toMatch(/executeNow/);
    expect(log.said()).toEqual(["served next"]);
    expect(soul.state().turn).toBe(1);
    await soul.stop();
  });

  it("rejects a hand-over to an undeclared successor: error event, inbox error, soul stays, nothing committed", async () => {
    const rogue: MentalProcess = async ({ workingMemory }) => workingMemory;
    const stayer: MentalProcess = async ({ workingMemory }) => {
      const { invokingPerception } = usePerceptions();
      useActions().speak(`heard ${invokingPerception.content}`);
      return invokingPerception.content === "escape" ? [workingMemory.withMonologue("escaping"), rogue] : workingMemory;
    };
    const blueprint = defineSoul({ name: "S", persona: "p", initialProcess: stayer, processes: { stayer, rogue } });
    const soul = createSoul({ blueprint, id: "s", store: env.actor("s") });
    const log = record(soul);
    await soul.perceive(said("one"));
    await soul.idle();
    const before = env.actor("s").loadState();
    const bad = await soul.perceive(said("escape"));
    await soul.idle();
    expect(log.errors()[0]).toMatch(/'stayer' handed over to 'rogue', which it does not declare/);
    expect(env.actor("s").inboxEntry(bad.id)).toMatchObject({ status: "error" });
    expect(env.actor("s").loadState()).toEqual(before);
    expect(soul.state().process).toBe("stayer");
    await soul.perceive(said("two"));
    await soul.idle();
    expect(log.said()).toEqual(["heard one", "heard two"]);
    const memory = soul.memory().workingMemory.memories.map((m) => m.content);
    expect(memory.some((c) => c.includes("escape"))).toBe(false);
    await soul.stop();
  });

  it("rejects a returned function that is not in the blueprint", async () => {
    const stranger: MentalProcess = async ({ workingMemory }) => workingMemory;
    const main: MentalProcess = async ({ workingMemory }) => [workingMemory, stranger];
    const soul = createSoul({ blueprint: defineSoul({ name: "X", persona: "", initialProcess: main, processes: { main } }), id: "x", store: env.actor("x") });
    const log = record(soul);
    await soul.perceive(said("hi"));
    await soul.idle();
    expect(log.errors()[0]).toMatch(/returned function stranger, which is not a process of soul 'X'/);
    await soul.stop();
  });
});

describe("blueprint validation", () => {
  const p: MentalProcess = async ({ workingMemory }) => workingMemory;
  const q: MentalProcess = async ({ workingMemory }) => workingMemory;

  it("names an unknown successor", () => {
    expect(() => defineSoul({ name: "B", persona: "", initialProcess: p, processes: { p: { process: p, next: ["nowhere"] } } })).toThrow(
      /process 'p' names unknown successor 'nowhere'/,
    );
  });

  it("rejects duplicates: a successor listed twice, one function under two names, a subprocess named like a process", () => {
    expect(() =>
      defineSoul({ name: "B", persona: "", initialProcess: p, processes: { p: { process: p, next: ["q", "q"] }, q } }),
    ).toThrow(/lists successor 'q' twice/);
    expect(() => defineSoul({ name: "B", persona: "", initialProcess: p, processes: { p, also: p } })).toThrow(/same function/);
    expect(() => defineSoul({ name: "B", persona: "", initialProcess: p, processes: { p }, subprocesses: { p: q } })).toThrow(
      SoulBlueprintError,
    );
  });

  it("rejects an initial process that is not declared, and a bad process name", () => {
    expect(() => defineSoul({ name: "B", persona: "", initialProcess: q, processes: { p } })).toThrow(/initialProcess function/);
    expect(() => defineSoul({ name: "B", persona: "", initialProcess: "p", processes: { "a.b": p } })).toThrow(/must match/);
  });
});
