import { describe, expect, it } from "vitest";
import { externalDialog, internalMonologue } from "../../../runtime/cognition/steps/index.ts";
import type { CognitionContext } from "../../../runtime/cognition/CognitionContext.ts";
import { createOfflineModel } from "../../../runtime/providers/offline.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";
import {
  createInProcessOutlet,
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useSoulMemory,
  type MentalProcess,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

function cognition(latencyMs = 0): { ctx: CognitionContext; steps: string[] } {
  const steps: string[] = [];
  const registry = new ModelRegistry().register("offline", createOfflineModel({ latencyMs })).register("slow", createOfflineModel({ latencyMs: 50 }));
  return { ctx: { registry, defaultModel: "offline:echo", onUsage: (_u, info) => steps.push(`${info.step}@${info.model}`) }, steps };
}

describe("cognitive steps inside a soul", () => {
  it("stream speech from the offline model, with the blueprint's model per step", async () => {
    const chat: MentalProcess = async ({ workingMemory }) => {
      const [thought] = await internalMonologue(workingMemory, "Think about what they said.");
      const [memory, stream] = await externalDialog(thought, "Answer them.", { stream: true });
      useActions().speak(stream);
      return memory;
    };
    const { ctx, steps } = cognition();
    const outlet = createInProcessOutlet();
    const chunks: string[] = [];
    outlet.onChunk((c) => chunks.push(c.text));
    const soul = createSoul({
      blueprint: defineSoul({ name: "Echo", persona: "An echo.", initialProcess: chat, processes: { chat }, models: { internalMonologue: "slow:pondering" } }),
      id: "echo",
      store: env.actor("echo"),
      outlet,
      cognition: ctx,
    });
    const log = record(soul);
    await soul.perceive(said("hello there"));
    await soul.idle();
    expect(log.speech).toHaveLength(1);
    expect(log.speech[0].content.length).toBeGreaterThan(0);
    expect(chunks.join("")).toBe(log.speech[0].content);
    expect(steps).toEqual(["internalMonologue@pondering", "externalDialog@echo"]);
    // The streamed answer is in the committed memory, after the perception.
    const stored = JSON.stringify(env.actor("echo").loadState()?.workingMemory);
    expect(stored).toContain("hello there");
    expect(stored).toContain("Echo said:");
    await soul.stop();
  });

  it("abort a cancelled subprocess's step: none of its writes land", async () => {
    let outcome = "";
    let started = false;
    const reflect: MentalProcess = async ({ workingMemory }) => {
      if (usePerceptions().invokingPerception.content !== "reflect") return workingMemory;
      useSoulMemory("reflected", false).current = true;
      started = true;
      try {
        const [memory] = await internalMonologue(workingMemory, "Reflect at length.", { model: "slow:pondering" });
        outcome = "finished";
        return memory;
      } catch (err) {
        outcome = `failed: ${(err as Error).message}`;
        throw err;
      }
    };
    const main: MentalProcess = async ({ workingMemory }) => workingMemory;
    const { ctx } = cognition();
    const soul = createSoul({
      blueprint: defineSoul({ name: "R", persona: "", initialProcess: main, processes: { main }, subprocesses: [reflect] }),
      id: "r",
      store: env.actor("r"),
      cognition: ctx,
    });
    await soul.perceive(said("reflect"));
    // The subprocess's slow step is under way when the next perception comes.
    await until(() => started);
    await soul.perceive(said("interrupt"));
    await soul.idle();
    await until(() => outcome !== "");
    expect(outcome).toMatch(/failed: .*abort/i);
    expect(env.actor("r").loadState()?.soulMemory).toEqual({});
    await soul.stop();
  });

  it("does not start subprocesses at all when a perception is already waiting as the turn ends", async () => {
    const reflections: string[] = [];
    const reflect: MentalProcess = async ({ workingMemory }) => {
      reflections.push(usePerceptions().invokingPerception.content);
      return workingMemory;
    };
    const main: MentalProcess = async ({ workingMemory }) => {
      // Slow enough that the second perception is queued before this turn ends.
      if (usePerceptions().invokingPerception.content === "first") await new Promise((resolve) => setTimeout(resolve, 30));
      return workingMemory;
    };
    const soul = createSoul({
      blueprint: defineSoul({ name: "Q", persona: "", initialProcess: main, processes: { main }, subprocesses: [reflect] }),
      id: "q",
      store: env.actor("q"),
    });
    await Promise.all([soul.perceive(said("first")), soul.perceive(said("second"))]);
    await soul.idle();
    // The first turn's subprocesses gave way to the waiting perception; the second turn's ran.
    expect(reflections).toEqual(["second"]);
    expect(env.actor("q").loadState()?.turn).toBe(2);
    await soul.stop();
  });
});
