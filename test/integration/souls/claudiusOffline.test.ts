/**
 * Claudius with no key at all: the embedded default registry and default model are the
 * offline model, and a short conversation runs through the whole pipeline and speaks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createDefaultRegistry, defaultModelName } from "../../../runtime/providers/index.ts";
import { claudius } from "../../../souls/claudius/index.ts";
import { startClaudiusRig, type ClaudiusRig } from "../../support/souls/claudiusRig.ts";

let rig: ClaudiusRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe("Claudius on the offline model", () => {
  it("holds a short conversation with no key", async () => {
    const env = {}; // no ANTHROPIC_API_KEY, no GROQ_API_KEY
    const defaultModel = defaultModelName(env);
    expect(defaultModel).toBe("offline:echo");
    const registry = createDefaultRegistry(env);
    expect(registry.providers()).toEqual(["offline"]);
    rig = await startClaudiusRig({ blueprint: () => claudius, cognition: { registry, defaultModel } });

    const first = await rig.say("Hello, I'm Tom. How do I temper a chisel?");
    expect(first.errors).toEqual([]);
    expect(first.process).toBe("main");
    expect(first.spoken).toHaveLength(1);
    expect(first.spoken[0]).toMatch(/offline/i);

    for (const text of ["Straw colour or blue?", "Thanks, that helps."]) {
      const turn = await rig.say(text);
      expect(turn.errors).toEqual([]);
      expect(turn.spoken).toHaveLength(1);
      expect(turn.spoken[0]).toContain(text.slice(0, 10));
      expect(turn.process).toBe("main");
    }
    const state = rig.soul().memory().soulMemory;
    // The third interaction checked the soul state; the offline model answers it too.
    expect(state["emotionalState"]).toBe("neutral");
    expect(typeof state["currentTopic"]).toBe("string");
    expect(rig.soul().state().turn).toBe(3);
  });
});
