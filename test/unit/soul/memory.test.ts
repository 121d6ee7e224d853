import { describe, expect, it } from "vitest";
import {
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useProcessMemory,
  useSoulMemory,
  type MentalProcess,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

describe("useProcessMemory", () => {
  it("keeps slots by call order across invocations and resets them when the soul switches process", async () => {
    const seen: string[] = [];
    let other!: MentalProcess;
    const counting: MentalProcess = async ({ workingMemory }) => {
      const visits = useProcessMemory(0);
      const notes = useProcessMemory<string[]>([]);
      visits.current += 1;
      notes.current.push(usePerceptions().invokingPerception.content);
      seen.push(`${visits.current}:${notes.current.join(",")}`);
      return usePerceptions().invokingPerception.content === "switch" ? [workingMemory, other] : workingMemory;
    };
    other = async ({ workingMemory }) => [workingMemory, counting];
    const blueprint = defineSoul({
      name: "PM",
      persona: "",
      initialProcess: counting,
      processes: { counting: { process: counting, next: ["other"] }, other: { process: other, next: ["counting"] } },
    });
    const soul = createSoul({ blueprint, id: "pm", store: env.actor("pm") });
    for (const text of ["a", "b", "switch", "back", "c"]) await soul.perceive(said(text));
    await soul.idle();
    // "back" runs in `other`, which hands back to counting: counting starts afresh at "c".
    expect(seen).toEqual(["1:a", "2:a,b", "3:a,b,switch", "1:c"]);
    expect(env.actor("pm").loadState()?.processMemory["counting"]).toEqual([1, ["c"]]);
    await soul.stop();
  });
});

describe("useSoulMemory", () => {
  it("persists across processes and restarts, and in-place edits of an uncommitted turn never leak", async () => {
    const main: MentalProcess = async ({ workingMemory }) => {
      const names = useSoulMemory<string[]>("names", []);
      const { invokingPerception } = usePerceptions();
      names.current.push(invokingPerception.name);
      useActions().speak(names.current.join(","));
      if (invokingPerception.content === "fail") throw new Error("after editing in place");
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "SM", persona: "", initialProcess: main, processes: { main } });
    const first = createSoul({ blueprint, id: "sm", store: env.actor("sm") });
    await first.perceive(said("hi", "Ada"));
    await first.perceive(said("fail", "Mallory"));
    await first.perceive(said("hi", "Bob"));
    await first.idle();
    expect(first.memory().soulMemory).toEqual({ names: ["Ada", "Bob"] });
    await first.stop();
    await env.reopen();
    const second = createSoul({ blueprint, id: "sm", store: env.actor("sm") });
    const log = record(second);
    await second.perceive(said("hi", "Cy"));
    await second.idle();
    expect(log.said()).toEqual(["Ada,Bob,Cy"]);
    expect(env.actor("sm").loadState()?.soulMemory).toEqual({ names: ["Ada", "Bob", "Cy"] });
    await second.stop();
  });

  it("stores a whisper as daimonicWhisper, durably, without a turn", async () => {
    const main: MentalProcess = async ({ workingMemory }) => {
      useActions().speak(JSON.stringify(useSoulMemory("daimonicWhisper", null).current));
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "W", persona: "", initialProcess: main, processes: { main } }), id: "w", store: env.actor("w") });
    const log = record(soul);
    await soul.whisper("they are testing you", "daimon-1");
    expect(env.actor("w").loadState()?.soulMemory).toEqual({ daimonicWhisper: { content: "they are testing you", source: "daimon-1" } });
    expect(env.actor("w").loadState()?.turn).toBe(0);
    await soul.perceive(said("hello"));
    await soul.idle();
    expect(log.said()).toEqual(['{"content":"they are testing you","source":"daimon-1"}']);
    await soul.stop();
  });

  it("hooks called outside a soul's turn fail with a clear error", () => {
    expect(() => useActions()).toThrow(/useActions\(\) can only be called inside a mental process/);
    expect(() => useSoulMemory("x", 1)).toThrow(/useSoulMemory\(\)/);
  });
});

describe("memory integration", () => {
  it("sets the persona as the core region and appends perceptions with user or assistant roles", async () => {
    const main: MentalProcess = async ({ workingMemory }) => workingMemory;
    const blueprint = defineSoul({ name: "Ivy", persona: "# Ivy\nA careful soul.", initialProcess: main, processes: { main } });
    const soul = createSoul({ blueprint, id: "ivy", store: env.actor("ivy") });
    await soul.perceive({ action: "said", content: "hello", name: "Ada" });
    await soul.perceive({ action: "noticed", content: "time passes", name: "Ivy", internal: true });
    await soul.idle();
    const memories = soul.memory().workingMemory.memories.map(({ role, content, name, region }) => ({ role, content, name, region }));
    expect(memories).toEqual([
      { role: "system", content: "# Ivy\nA careful soul.", name: undefined, region: "core" },
      { role: "user", content: 'Ada said: "hello"', name: "Ada", region: undefined },
      { role: "assistant", content: 'Ivy noticed: "time passes"', name: undefined, region: undefined },
    ]);
    await soul.stop();
  });
});
