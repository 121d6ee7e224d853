import { describe, expect, it } from "vitest";
import { instruction, runWithCognition, WorkingMemory } from "../../../runtime/cognition/index.ts";
import type { CompletionRequest } from "../../../runtime/providers/LanguageModel.ts";
import { createOfflineModel } from "../../../runtime/providers/offline.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";

/** Two offline models under different provider names, recording which one each step reached. */
function recordingRegistry() {
  const calls: { provider: string; model?: string }[] = [];
  const registry = new ModelRegistry();
  for (const provider of ["fast", "smart"]) {
    const base = createOfflineModel();
    registry.register(provider, {
      provider,
      complete: (req: CompletionRequest) => {
        calls.push({ provider, model: req.model });
        return base.complete(req);
      },
      stream: (req: CompletionRequest) => {
        calls.push({ provider, model: req.model });
        return base.stream(req);
      },
    });
  }
  return { registry, calls };
}

const memory = new WorkingMemory({ soulName: "Ada", memories: [{ role: "user", content: "hi" }] });

describe("model choice per cognitive step", () => {
  it("uses the turn's default model when the step names none", async () => {
    const { registry, calls } = recordingRegistry();
    await runWithCognition({ registry, defaultModel: "fast:tiny" }, () => instruction(memory, "say hi"));
    expect(calls).toEqual([{ provider: "fast", model: "tiny" }]);
  });

  it("uses the model the step names over the default", async () => {
    const { registry, calls } = recordingRegistry();
    await runWithCognition({ registry, defaultModel: "fast:tiny" }, () => instruction(memory, "say hi", { model: "smart:big" }));
    expect(calls).toEqual([{ provider: "smart", model: "big" }]);
  });

  it("lets a selector set on the registry pick the model from the step's context", async () => {
    const { registry, calls } = recordingRegistry();
    registry.setSelector(({ step, soul }) => (step === "instruction" && soul === "Ada" ? "smart:picked" : undefined));
    await runWithCognition({ registry, defaultModel: "fast:tiny" }, () => instruction(memory, "say hi"));
    expect(calls).toEqual([{ provider: "smart", model: "picked" }]);
  });

  it("gives the turn's selector precedence over the registry's", async () => {
    const { registry, calls } = recordingRegistry();
    registry.setSelector(() => "smart:registry");
    await runWithCognition({ registry, defaultModel: "fast:tiny", modelSelector: () => "fast:turn" }, () =>
      instruction(memory, "say hi"),
    );
    expect(calls).toEqual([{ provider: "fast", model: "turn" }]);
  });
});
