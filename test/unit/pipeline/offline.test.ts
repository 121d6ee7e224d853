import { describe, expect, it } from "vitest";
import { runPipeline, runWithCognition, streamPipeline, WorkingMemory, type PipelineResult } from "../../../runtime/cognition/index.ts";
import { createOfflineModel } from "../../../runtime/providers/offline.ts";
import { ModelRegistry } from "../../../runtime/providers/registry.ts";

const context = () => ({ registry: new ModelRegistry().register("offline", createOfflineModel()), defaultModel: "offline:echo" });

describe("the unified pipeline on the offline model", () => {
  it("gets every requested section back, and memory keeps the monologue apart from what is spoken", async () => {
    const results: PipelineResult[] = [];
    const memory = await runWithCognition(context(), async () => {
      let m = new WorkingMemory({ soulName: "Samantha" });
      for (const text of ["hello there", "I am working on a port", "it is nearly done"]) {
        const [next, r] = await runPipeline(m, { message: { text, userName: "Tom" }, persona: "# Samantha" });
        m = next;
        results.push(r);
      }
      return m;
    });
    for (const r of results) {
      expect(r.calls).toBe(1);
      expect(r.issues).toEqual([]);
      expect(r.dialogue).toContain("offline model");
      expect(r.monologue).toBeDefined();
      expect(r.dialogue).not.toContain(r.monologue!);
      expect(r.verbs.monologue).toBeDefined();
      expect(r.verbs.dialogue).toBeDefined();
    }
    // The offline model answers a check true exactly when the update was asked for too.
    expect(results[0]).toMatchObject({ userModelCheck: true, userModelUpdate: expect.stringContaining("## Persona") });
    expect(results[2].soulStateCheck).toBe(true);
    expect(results[2].soulStateUpdate).toMatchObject({ emotionalState: "neutral" });
    const kinds = memory.memories.map((m) => m.metadata?.["step"]);
    expect(kinds.filter((k) => k === "internalMonologue")).toHaveLength(3);
    expect(kinds.filter((k) => k === "externalDialog")).toHaveLength(3);
    expect(kinds.filter((k) => k === "mentalQuery")).toHaveLength(4);
  });

  it("streams on the offline model too", async () => {
    const chunks: string[] = [];
    const [, result] = await runWithCognition(context(), async () => {
      const s = streamPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "hello", userName: "Tom" } });
      for await (const c of s.dialogue) chunks.push(c);
      return s.done;
    });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join("")).toBe(result.dialogue);
  });
});
