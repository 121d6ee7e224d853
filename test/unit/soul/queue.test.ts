import { describe, expect, it } from "vitest";
import { createSoul, defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

describe("perception queue", () => {
  it("queues perceptions that arrive during a slow process, shows them live as pending, and keeps their order", async () => {
    const gate = deferred();
    const started = deferred();
    const pendingSeen: string[][] = [];
    const processed: string[] = [];
    const slow: MentalProcess = async ({ workingMemory }) => {
      const { invokingPerception, pendingPerceptions } = usePerceptions();
      processed.push(invokingPerception.content);
      if (invokingPerception.content === "first") {
        pendingSeen.push(pendingPerceptions.current.map((p) => p.content));
        started.resolve();
        await gate.promise;
        // The same ref, read again: it is live, not a copy taken when the hook ran.
        pendingSeen.push(pendingPerceptions.current.map((p) => p.content));
      }
      useActions().speak(`done ${invokingPerception.content}`);
      return workingMemory;
    };
    const soul = createSoul({
      blueprint: defineSoul({ name: "Q", persona: "", initialProcess: slow, processes: { slow } }),
      id: "q",
      store: env.actor("q"),
    });
    const log = record(soul);
    await soul.perceive(said("first"));
    await started.promise;
    await soul.perceive(said("second"));
    await soul.perceive(said("third"));
    expect(soul.state()).toMatchObject({ pending: 2, running: true });
    gate.resolve();
    await soul.idle();
    expect(pendingSeen).toEqual([[], ["second", "third"]]);
    expect(processed).toEqual(["first", "second", "third"]);
    expect(log.said()).toEqual(["done first", "done second", "done third"]);
    expect(soul.state()).toMatchObject({ turn: 3, pending: 0, running: false });
    await soul.stop();
  });

  it("drops a perception whose id was already received", async () => {
    let runs = 0;
    const main: MentalProcess = async ({ workingMemory }) => {
      runs++;
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "D", persona: "", initialProcess: main, processes: { main } }), id: "d", store: env.actor("d") });
    expect(await soul.perceive({ ...said("hi"), id: "env-1" })).toMatchObject({ accepted: true, id: "env-1" });
    expect(await soul.perceive({ ...said("hi"), id: "env-1" })).toMatchObject({ accepted: false, reason: "duplicate" });
    await soul.idle();
    expect(runs).toBe(1);
    await soul.stop();
  });

  it("rejects a malformed perception with a clear error and records nothing", async () => {
    const main: MentalProcess = async ({ workingMemory }) => workingMemory;
    const soul = createSoul({ blueprint: defineSoul({ name: "M", persona: "", initialProcess: main, processes: { main } }), id: "m", store: env.actor("m") });
    await expect(soul.perceive({ action: "said", content: 42 as unknown as string, name: "Ada" })).rejects.toThrow(/perception.content must be a string/);
    await expect(soul.perceive({ ...said("x"), process: "nowhere" })).rejects.toThrow(/unknown process 'nowhere'/);
    expect(env.actor("m").pendingInbox()).toHaveLength(0);
    await soul.stop();
  });

  it("keeps the main process running when a new perception arrives (only subprocesses are cancelled)", async () => {
    const gate = deferred();
    let finished = false;
    const main: MentalProcess = async ({ workingMemory }) => {
      const { invokingPerception } = usePerceptions();
      if (invokingPerception.content === "long") {
        await gate.promise;
        finished = true;
      }
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "K", persona: "", initialProcess: main, processes: { main } }), id: "k", store: env.actor("k") });
    await soul.perceive(said("long"));
    await until(() => soul.state().running);
    await soul.perceive(said("short"));
    gate.resolve();
    await soul.idle();
    expect(finished).toBe(true);
    expect(soul.state().turn).toBe(2);
    await soul.stop();
  });
});
