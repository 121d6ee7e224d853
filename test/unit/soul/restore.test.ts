import { describe, expect, it } from "vitest";
import {
  createManualClock,
  createSoul,
  createSoulHost,
  defineSoul,
  useActions,
  usePerceptions,
  useProcessManager,
  useProcessMemory,
  useSoulMemory,
  type MentalProcess,
  type Outlet,
  type Proposal,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

let conversation!: MentalProcess;
const greeting: MentalProcess = async ({ workingMemory }) => {
  useSoulMemory("greeted", 0).current += 1;
  useActions().speak("hello");
  return [workingMemory.withMonologue("I greeted them"), conversation, { params: { topic: "weather" } }];
};
conversation = async ({ workingMemory, params }) => {
  const { invocationCount, previousMentalProcess } = useProcessManager();
  const lines = useProcessMemory(0);
  lines.current += 1;
  useActions().speak(
    `conversation #${invocationCount} lines=${lines.current} fromGreeting=${previousMentalProcess === greeting} params=${JSON.stringify(params)}`,
  );
  return workingMemory;
};
const blueprint = defineSoul({
  name: "Keeper",
  persona: "keeps things",
  initialProcess: greeting,
  processes: { greeting: { process: greeting, next: ["conversation"] }, conversation },
});

describe("restore", () => {
  it("continues after reopening the environment: same process, memories, counts and pending params", async () => {
    const first = createSoul({ blueprint, id: "k", store: env.actor("k") });
    await first.perceive(said("hi"));
    await first.idle();
    const memoryBefore = first.memory().workingMemory.toJSON();
    await first.stop();
    await env.reopen();

    const second = createSoul({ blueprint, id: "k", store: env.actor("k") });
    expect(second.state()).toMatchObject({ process: "conversation", previousProcess: "greeting", turn: 1 });
    expect(second.memory().workingMemory.toJSON()).toEqual(memoryBefore);
    expect(second.memory().soulMemory).toEqual({ greeted: 1 });
    const log = record(second);
    await second.perceive(said("how are you"));
    await second.perceive(said("and now"));
    await second.idle();
    expect(log.said()).toEqual([
      'conversation #0 lines=1 fromGreeting=true params={"topic":"weather"}',
      "conversation #1 lines=2 fromGreeting=true params={}",
    ]);
    await second.stop();
    await env.reopen();

    const third = createSoul({ blueprint, id: "k", store: env.actor("k") });
    const thirdLog = record(third);
    await third.perceive(said("still there?"));
    await third.idle();
    expect(thirdLog.said()).toEqual(["conversation #2 lines=3 fromGreeting=true params={}"]);
    expect(third.state().invocationCounts).toEqual({ greeting: 1, conversation: 3 });
    await third.stop();
  });

  it("replays perceptions left pending in the inbox, in order, each once", async () => {
    const store = env.actor("p");
    await store.receive("a", { id: "a", action: "said", content: "first", name: "Ada", ts: 1 });
    await store.receive("b", { id: "b", action: "said", content: "second", name: "Ada", ts: 2 });
    await env.reopen();
    const seen: string[] = [];
    const main: MentalProcess = async ({ workingMemory }) => {
      seen.push(usePerceptions().invokingPerception.content);
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "P", persona: "", initialProcess: main, processes: { main } }), id: "p", store: env.actor("p") });
    await soul.idle();
    expect(seen).toEqual(["first", "second"]);
    expect(env.actor("p").pendingInbox()).toEqual([]);
    expect(await soul.perceive({ ...said("first"), id: "a" })).toMatchObject({ accepted: false });
    await soul.idle();
    expect(seen).toEqual(["first", "second"]);
    await soul.stop();
  });

  it("delivers un-acknowledged outbox entries again after a restart, with the same ids", async () => {
    const failing: Outlet = {
      deliver() {
        throw new Error("bridge down");
      },
    };
    const first = createSoul({ blueprint, id: "o", store: env.actor("o"), outlet: failing });
    const log = record(first);
    await first.perceive(said("hi"));
    await first.idle();
    expect(log.events.some((e) => e.type === "error" && e.phase === "deliver")).toBe(true);
    const pending = env.actor("o").pendingOutbox().map((e) => e.id);
    expect(pending).toEqual(["o:1:0"]);
    await first.stop();
    await env.reopen();

    const delivered: Proposal[] = [];
    const second = createSoul({ blueprint, id: "o", store: env.actor("o"), outlet: { deliver: (p) => void delivered.push(p) } });
    await second.idle();
    expect(delivered.map((p) => [p.id, p.content, p.kind])).toEqual([["o:1:0", "hello", "speak"]]);
    expect(env.actor("o").pendingOutbox()).toEqual([]);
    await second.stop();

    const third = createSoul({ blueprint, id: "o", store: env.actor("o"), outlet: { deliver: (p) => void delivered.push(p) } });
    await third.idle();
    expect(delivered).toHaveLength(1);
    await third.stop();
  });
});

describe("passivation", () => {
  it("stops idle souls and rehydrates them on the next perception with nothing visible to the blueprint", async () => {
    const speech: string[] = [];
    const host = createSoulHost({
      blueprint,
      store: (id) => env.actor(id),
      onActivate: (soul) => soul.onSpeech((p) => speech.push(`${soul.id}: ${p.content}`)),
    });
    await host.perceive("a", said("hi"));
    await host.perceive("a", said("one"));
    await host.perceive("b", said("hi"));
    await Promise.all([(await host.get("a")).idle(), (await host.get("b")).idle()]);
    expect(host.live().sort()).toEqual(["a", "b"]);

    const passivated = await host.passivateIdle(0);
    expect(passivated.sort()).toEqual(["a", "b"]);
    expect(host.live()).toEqual([]);
    expect(host.registry.getSnapshot().context.souls.get("a")).toMatchObject({ status: "passivated", activations: 1 });

    await host.perceive("a", said("two"));
    const a = await host.get("a");
    await a.idle();
    // Each soul's speech in its order; two souls' speech interleaves as their turns happen to.
    expect(speech.filter((line) => line.startsWith("a: "))).toEqual([
      "a: hello",
      "a: conversation #0 lines=1 fromGreeting=true params={\"topic\":\"weather\"}",
      "a: conversation #1 lines=2 fromGreeting=true params={}",
    ]);
    expect(speech.filter((line) => line.startsWith("b: "))).toEqual(["b: hello"]);
    expect(a.memory().soulMemory).toEqual({ greeted: 1 });
    expect(host.registry.getSnapshot().context.souls.get("a")).toMatchObject({ status: "active", activations: 2 });
    expect(host.live()).toEqual(["a"]);
    await host.close();
  });

  it("wakes a passivated soul when one of its scheduled events falls due", async () => {
    const clock = createManualClock(0);
    const nudge: MentalProcess = async ({ workingMemory }) => {
      useActions().speak("nudge");
      return workingMemory;
    };
    const main: MentalProcess = async ({ workingMemory }) => {
      useActions().scheduleEvent({ in: 30, process: nudge, perception: { action: "recalled", content: "check in" } });
      return workingMemory;
    };
    const speech: string[] = [];
    const host = createSoulHost({
      blueprint: defineSoul({ name: "N", persona: "", initialProcess: main, processes: { main, nudge } }),
      store: (id) => env.actor(id),
      clock,
      onActivate: (soul) => soul.onSpeech((p) => speech.push(p.content)),
    });
    await host.perceive("n", said("hi"));
    await (await host.get("n")).idle();
    await host.passivate("n");
    expect(host.live()).toEqual([]);
    clock.advance(30_000);
    await until(() => host.live().length === 1);
    clock.advance(0);
    await (await host.get("n")).idle();
    expect(speech).toEqual(["nudge"]);
    await host.close();
  });
});
