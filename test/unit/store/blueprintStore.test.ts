/**
 * useBlueprintStore(): read-only BM25 search over the files of a soul's rag/ folder, chunked
 * by heading and paragraph, re-indexed when a file changes (as under `ensoul dev`).
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryActorStore, createSoul, defineSoul, useActions, useBlueprintStore, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { chunkText, createBlueprintStores } from "../../../runtime/store/index.ts";
import { loadSoulModule } from "../../../runtime/node/soulModule.ts";
import { record, said } from "../../support/soul/helpers.ts";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function ragFolder(): string {
  dir = mkdtempSync(join(tmpdir(), "ensoul-rag-"));
  const rag = join(dir, "rag");
  mkdirSync(join(rag, "places"), { recursive: true });
  writeFileSync(join(rag, "recipes.md"), "# Soup\n\nLentil soup needs cumin and lemon.\n\n# Bread\n\nSourdough needs a starter and patience.\n");
  writeFileSync(join(rag, "places", "harbour.txt"), "The harbour master lives at pier nine.");
  writeFileSync(join(rag, "image.png"), "not text");
  return rag;
}

describe("useBlueprintStore", () => {
  it("chunks by heading and paragraph", () => {
    expect(chunkText("# A\n\none\n\ntwo\n# B\n\nthree")).toEqual(["# A\n\none\n\ntwo", "# B\n\nthree"]);
    expect(chunkText("x".repeat(30) + "\n\n" + "y".repeat(30), 40)).toEqual(["x".repeat(30), "y".repeat(30)]);
  });

  it("searches the rag/ files, refuses writes, and re-indexes a changed file", async () => {
    const rag = ragFolder();
    const stores = createBlueprintStores({ recheckMs: 0 });
    const answers: unknown[] = [];
    const ask: MentalProcess = async ({ workingMemory }) => {
      const store = useBlueprintStore();
      const { content } = usePerceptions().invokingPerception;
      if (content === "write") store.set("x", "y");
      const hits = await store.search(content, { limit: 2 });
      answers.push(hits.map((h) => [h.key, h.metadata]));
      useActions().speak("ok");
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "Librarian", persona: "reads", initialProcess: ask, processes: { ask }, rag });
    const soul = createSoul({ blueprint, id: "lib", store: createMemoryActorStore("lib"), services: { blueprintStore: stores } });
    const log = record(soul);
    await soul.perceive(said("cumin soup"));
    await soul.idle();
    await soul.perceive(said("pier"));
    await soul.idle();
    expect(answers).toEqual([[["recipes.md#0", { file: "recipes.md", chunk: 0 }]], [["places/harbour.txt#0", { file: "places/harbour.txt", chunk: 0 }]]]);
    await soul.perceive(said("write"));
    await soul.idle();
    expect(log.errors().at(-1)).toMatch(/useBlueprintStore\(\) is read-only: set\(\) is refused/);

    writeFileSync(join(rag, "places", "harbour.txt"), "The harbour master moved to the lighthouse.");
    utimesSync(join(rag, "places", "harbour.txt"), new Date(), new Date(Date.now() + 5000));
    await soul.perceive(said("pier"));
    await soul.idle();
    await soul.perceive(said("lighthouse"));
    await soul.idle();
    expect(answers.slice(-2)).toEqual([[], [["places/harbour.txt#0", { file: "places/harbour.txt", chunk: 0 }]]]);
    expect(stores(rag).get("recipes.md#1")?.content).toBe("# Bread\n\nSourdough needs a starter and patience.");
    await soul.stop();
  });

  it("gives a soul loaded from a folder its rag/ folder", async () => {
    const rag = ragFolder();
    const soulFile = join(rag, "..", "soul.ts");
    const actors = pathToFileURL(join(process.cwd(), "actors/soul/index.ts")).href;
    writeFileSync(soulFile, `import { defineSoul } from ${JSON.stringify(actors)};\nconst p = async ({ workingMemory }) => workingMemory;\nexport default defineSoul({ name: "Folder", persona: "x", initialProcess: p, processes: { p } });\n`);
    const blueprint = await loadSoulModule(join(rag, ".."));
    expect(blueprint.ragDir).toBe(rag);
  });
});
