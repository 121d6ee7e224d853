import { describe, expect, it } from "vitest";
import {
  createManualClock,
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useProcessManager,
  type MentalProcess,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

describe("soul lifecycle", () => {
  it("wait() sleeps on the soul's clock", async () => {
    const clock = createManualClock(0);
    const patient: MentalProcess = async ({ workingMemory }) => {
      await useProcessManager().wait(5_000);
      useActions().speak("waited");
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "P", persona: "", initialProcess: patient, processes: { patient } }), id: "p", store: env.actor("p"), clock });
    const log = record(soul);
    await soul.perceive(said("go"));
    await until(() => clock.pending() === 1);
    clock.advance(4_999);
    await new Promise((r) => setTimeout(r, 5));
    expect(log.said()).toEqual([]);
    clock.advance(1);
    await soul.idle();
    expect(log.said()).toEqual(["waited"]);
    await soul.stop();
  });

  it("expire() ends the soul after its turn commits; it refuses perceptions, also after a restart", async () => {
    const mortal: MentalProcess = async ({ workingMemory }) => {
      useActions().speak("goodbye");
      if (usePerceptions().invokingPerception.content === "end") useActions().expire();
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "M", persona: "", initialProcess: mortal, processes: { mortal } });
    const soul = createSoul({ blueprint, id: "m", store: env.actor("m") });
    const log = record(soul);
    await soul.perceive(said("end"));
    await soul.idle();
    expect(log.said()).toEqual(["goodbye"]);
    expect(log.events.some((e) => e.type === "expired")).toBe(true);
    expect(await soul.perceive(said("hello?"))).toMatchObject({ accepted: false, reason: "expired" });
    await soul.stop();
    await env.reopen();
    const again = createSoul({ blueprint, id: "m", store: env.actor("m") });
    expect(await again.perceive(said("hello?"))).toMatchObject({ accepted: false, reason: "expired" });
    await again.stop();
  });

  it("restores into the initial process, with a restore error, when the stored process left the blueprint", async () => {
    const old: MentalProcess = async ({ workingMemory }) => workingMemory;
    const start: MentalProcess = async ({ workingMemory }) => [workingMemory, old];
    const v1 = defineSoul({ name: "V", persona: "", initialProcess: start, processes: { start: { process: start, next: ["old"] }, old } });
    const first = createSoul({ blueprint: v1, id: "v", store: env.actor("v") });
    await first.perceive(said("hi"));
    await first.idle();
    expect(first.state().process).toBe("old");
    await first.stop();
    await env.reopen();

    const start2: MentalProcess = async ({ workingMemory }) => workingMemory;
    const v2 = defineSoul({ name: "V", persona: "", initialProcess: start2, processes: { start: start2 } });
    const errors: string[] = [];
    const second = createSoul({ blueprint: v2, id: "v", store: env.actor("v"), onEvent: (e) => e.type === "error" && errors.push(e.message) });
    expect(errors).toEqual(["stored process 'old' is not in blueprint 'V'; starting in 'start'"]);
    expect(second.state().process).toBe("start");
    expect(second.memory().workingMemory.length).toBeGreaterThan(0);
    await second.perceive(said("again"));
    await second.idle();
    expect(second.state().turn).toBe(2);
    await second.stop();
  });

  it("stop() lets the running turn finish and leaves queued perceptions in the inbox for the next activation", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const main: MentalProcess = async ({ workingMemory }) => {
      const content = usePerceptions().invokingPerception.content;
      seen.push(content);
      if (content === "first") await gate;
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "S", persona: "", initialProcess: main, processes: { main } });
    const soul = createSoul({ blueprint, id: "s", store: env.actor("s") });
    await soul.perceive(said("first"));
    await soul.perceive(said("second"));
    await until(() => seen.length === 1);
    const stopping = soul.stop();
    release();
    await stopping;
    expect(seen).toEqual(["first"]);
    expect(env.actor("s").loadState()?.turn).toBe(1);
    expect(env.actor("s").pendingInbox().map((e) => (e.perception as { content: string }).content)).toEqual(["second"]);
    await env.reopen();
    const again = createSoul({ blueprint, id: "s", store: env.actor("s") });
    await again.idle();
    expect(seen).toEqual(["first", "second"]);
    await again.stop();
  });
});
