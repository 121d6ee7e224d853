import { describe, expect, it } from "vitest";
import {
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useProcessManager,
  useProcessMemory,
  useSoulMemory,
  type MentalProcess,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

const main: MentalProcess = async ({ workingMemory }) => {
  useActions().speak(`main ${usePerceptions().invokingPerception.content}`);
  return workingMemory;
};

describe("subprocesses", () => {
  it("are cancelled by a new perception, and none of their writes land", async () => {
    const gate = deferred();
    const waiting = deferred();
    let resumedAndFailed: unknown;
    const learn: MentalProcess = async ({ workingMemory }) => {
      if (usePerceptions().invokingPerception.content !== "learn") return workingMemory;
      useSoulMemory("facts", [] as string[]).current = ["learned"];
      useProcessMemory(0).current = 42;
      waiting.resolve();
      await gate.promise;
      try {
        useSoulMemory("facts", [] as string[]).current = ["late"];
      } catch (err) {
        resumedAndFailed = err;
        throw err;
      }
      return workingMemory.withMonologue("learned something");
    };
    const soul = createSoul({
      blueprint: defineSoul({ name: "L", persona: "", initialProcess: main, processes: { main }, subprocesses: [learn] }),
      id: "l",
      store: env.actor("l"),
    });
    const log = record(soul);
    await soul.perceive(said("learn"));
    await waiting.promise;
    const committedAfterMain = env.actor("l").loadState();
    expect(committedAfterMain?.turn).toBe(1);

    await soul.perceive(said("interrupt"));
    gate.resolve();
    await soul.idle();
    await until(() => resumedAndFailed !== undefined);

    expect((resumedAndFailed as Error).name).toBe("AbortError");
    const stored = env.actor("l").loadState();
    expect(stored?.soulMemory).not.toHaveProperty("facts");
    expect(stored?.processMemory["subprocess:learn"] ?? []).not.toContain(42);
    expect(JSON.stringify(stored?.workingMemory)).not.toContain("learned something");
    expect(stored?.turn).toBe(2);
    expect(log.said()).toEqual(["main learn", "main interrupt"]);
    await soul.stop();
  });

  it("log an error in one subprocess and still run the others; only the failing one's writes are dropped", async () => {
    const broken: MentalProcess = async () => {
      useSoulMemory("broken", 0).current = 1;
      throw new Error("subprocess exploded");
    };
    const summarize: MentalProcess = async ({ workingMemory }) => {
      const count = useSoulMemory("summaries", 0);
      count.current += 1;
      return workingMemory.withMonologue(`summary ${count.current}`);
    };
    const soul = createSoul({
      blueprint: defineSoul({ name: "E", persona: "", initialProcess: main, processes: { main }, subprocesses: { broken, summarize } }),
      id: "e",
      store: env.actor("e"),
    });
    const log = record(soul);
    await soul.perceive(said("one"));
    await soul.idle();
    await soul.perceive(said("two"));
    await soul.idle();
    const errors = log.events.filter((e) => e.type === "error");
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ phase: "subprocess", process: "broken", message: "subprocess exploded" });
    const stored = env.actor("e").loadState();
    expect(stored?.soulMemory).toEqual({ summaries: 2 });
    expect(JSON.stringify(stored?.workingMemory)).toContain("summary 2");
    await soul.stop();
  });

  it("may change the next process but not use executeNow", async () => {
    const calm: MentalProcess = async ({ workingMemory }) => workingMemory;
    const watcher: MentalProcess = async ({ workingMemory }) => {
      const content = usePerceptions().invokingPerception.content;
      if (content === "calm down") useProcessManager().setNextProcess("calm");
      if (content === "now") return [workingMemory, calm, { executeNow: true }];
      return workingMemory;
    };
    const soul = createSoul({
      blueprint: defineSoul({
        name: "W",
        persona: "",
        initialProcess: main,
        processes: { main: { process: main, next: ["calm"] }, calm },
        subprocesses: [watcher],
      }),
      id: "w",
      store: env.actor("w"),
    });
    const log = record(soul);
    await soul.perceive(said("now"));
    await soul.idle();
    expect(log.errors()).toEqual(["subprocess 'watcher' used executeNow, which only processes may use"]);
    expect(soul.state().process).toBe("main");
    await soul.perceive(said("calm down"));
    await soul.idle();
    expect(soul.state()).toMatchObject({ process: "calm", previousProcess: "main" });
    expect(env.actor("w").loadState()).toMatchObject({ currentProcess: "calm", snapshot: { value: { calm: "idle" } } });
    await soul.stop();
  });
});
