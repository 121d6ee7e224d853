/** A soul folder's `tools/`: loaded with the soul, kept for its blueprint, and callable by it; a module without a tool is a clear error. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { createMemoryActorStore, createSoul } from "../../../actors/soul/index.ts";
import { createToolRegistry } from "../../../actors/tool/index.ts";
import { toolsOfBlueprint } from "../../../runtime/node/soulFolderTools.ts";
import { loadSoulModule } from "../../../runtime/node/soulModule.ts";
import { record, said } from "../../support/soul/helpers.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const api = JSON.stringify(pathToFileURL(join(root, "api/index.ts")).href);
const zod = JSON.stringify(pathToFileURL(join(root, "node_modules/zod/index.js")).href);

function soulFolder(tools: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "ensoul-soul-tools-"));
  writeFileSync(
    join(dir, "index.mjs"),
    `import { defineSoul, useActions, useTool } from ${api};
const asking = async ({ workingMemory }) => {
  useActions().speak(String(await useTool("shout")({ text: "hello" })));
  return workingMemory;
};
export default defineSoul({ name: "Folder", persona: "has tools", initialProcess: asking, processes: { asking } });
`,
  );
  mkdirSync(join(dir, "tools"));
  for (const [name, text] of Object.entries(tools)) writeFileSync(join(dir, "tools", name), text);
  return dir;
}

it("loads the tools of a soul folder with its blueprint, and the soul calls them", async () => {
  const dir = soulFolder({
    "shout.mjs": `import { defineTool } from ${api};
import { z } from ${zod};
export const shout = defineTool({ name: "shout", description: "shouts", input: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() + "!" });
`,
    "README.md": "not a module",
  });
  const blueprint = await loadSoulModule(dir);
  expect(toolsOfBlueprint(blueprint).map((t) => t.name)).toEqual(["shout"]);
  const soul = createSoul({ blueprint, id: "folder", store: createMemoryActorStore("folder"), services: { tools: createToolRegistry(toolsOfBlueprint(blueprint)) } });
  const log = record(soul);
  await soul.perceive(said("go"));
  await soul.idle();
  expect(log.said()).toEqual(["HELLO!"]);
  await soul.stop();
});

it("refuses a tools/ module that exports no tool, naming it", async () => {
  const dir = soulFolder({ "nothing.mjs": "export const x = 1;\n" });
  await expect(loadSoulModule(dir)).rejects.toThrow(/nothing\.mjs exports no tool: export one made with defineTool\(\)/);
});
