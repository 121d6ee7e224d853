/**
 * Tools named by module in a YAML config (`tools: [{ module: ./tools/shout.mjs, export? }]`):
 * loaded relative to the config file when it is read, the soul calls the tool through its
 * node; a missing file, a missing export and an export that is not a tool are one-line errors
 * naming `tools[i]`'s field. In code (no file) a module entry is refused with what to do.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { ConfigError, loadClusterConfig, parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const root = fileURLToPath(new URL("../../../", import.meta.url));
const api = JSON.stringify(pathToFileURL(join(root, "api/index.ts")).href);
const zod = JSON.stringify(pathToFileURL(join(root, "node_modules/zod/index.js")).href);

const SOUL = `import { defineSoul, useActions, useTool } from ${api};
const asking = async ({ workingMemory }) => {
  useActions().speak(String(await useTool("shout")({ text: "hello" })));
  return workingMemory;
};
export default defineSoul({ name: "Asker", persona: "calls a tool", initialProcess: asking, processes: { asking } });
`;

const TOOLS = `import { defineTool } from ${api};
import { z } from ${zod};
export const shout = defineTool({ name: "shout", description: "shouts", input: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() + "!" });
export default defineTool({ name: "whisper", description: "whispers", input: z.object({ text: z.string() }), idempotent: true, run: ({ text }) => text.toLowerCase() });
export const notATool = { name: "fake" };
`;

/** A folder with the config (its `tools` section as given), the soul and the tool module in a subfolder. */
function project(tools: string): string {
  const dir = dirs.make();
  mkdirSync(join(dir, "souls"));
  mkdirSync(join(dir, "lib"));
  writeFileSync(join(dir, "souls", "asker.mjs"), SOUL);
  writeFileSync(join(dir, "lib", "tools.mjs"), TOOLS);
  writeFileSync(join(dir, "cluster.yaml"), `cluster: toolmods\nsouls:\n  - id: asker\n    blueprint: ./souls/asker.mjs\ntools:\n${tools}`);
  return join(dir, "cluster.yaml");
}

async function problem(file: string): Promise<string> {
  const err = await loadClusterConfig(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as Error).message;
}

it("loads a module's named and default tool from a YAML config, relative to the config file; the soul calls it", { timeout: 20_000 }, async () => {
  const file = project("  - module: ./lib/tools.mjs\n    export: shout\n    souls: [asker]\n  - module: lib/tools.mjs\n");
  // Loaded from another working directory: the paths are the config file's, not the cwd's.
  const loaded = await loadClusterConfig(file, root);
  expect(loaded.config.tools.map((t) => ("tool" in t ? [t.tool.name, t.souls] : []))).toEqual([
    ["shout", ["asker"]],
    ["whisper", undefined],
  ]);
  expect(loaded.config.tools[0]).not.toHaveProperty("module");
  expect(loaded.config.tools[0]).not.toHaveProperty("export");

  const node = await startNode({ config: loaded, data: dirs.make(), store: { noSync: true }, log: () => undefined });
  try {
    const says = watchEnvelopes(node.bus, clusterSubjects("toolmods").says("asker"), "speech");
    const p = await perceive(node.bus, "asker", "go");
    const speech = await says.next((e) => e.body.final && e.causation === p.id, 10_000, "the asker's answer");
    expect(speech.body.text).toBe("HELLO!");
    says.stop();
  } finally {
    await node.stop();
  }
});

it("names tools[i].module when the file does not exist", async () => {
  const file = project("  - module: ./lib/tools.mjs\n  - module: ./lib/nothing.mjs\n    export: shout\n");
  expect(await problem(file)).toMatch(/^.*cluster\.yaml: tools\[1\]\.module: no such file: \.\/lib\/nothing\.mjs \(looked for .*lib[\\/]nothing\.mjs\)$/);
});

it("names the export that is missing, and says what the module exports", async () => {
  expect(await problem(project("  - module: ./lib/tools.mjs\n    export: yell\n"))).toMatch(/cluster\.yaml: tools\[0\]\.export: \.\/lib\/tools\.mjs has no export 'yell' \(it exports notATool, shout\)$/);
  const noDefault = project("  - module: ./lib/plain.mjs\n");
  writeFileSync(join(noDefault, "..", "lib", "plain.mjs"), "export const a = 1;\n");
  expect(await problem(noDefault)).toMatch(/cluster\.yaml: tools\[0\]\.module: \.\/lib\/plain\.mjs has no default export \(it exports a\): name the tool's export with `export:`$/);
});

it("refuses an export that is not a tool made with defineTool", async () => {
  expect(await problem(project("  - module: ./lib/tools.mjs\n    export: notATool\n"))).toMatch(
    /cluster\.yaml: tools\[0\]\.export: export 'notATool' of \.\/lib\/tools\.mjs is not a tool: export one made with defineTool\(\)$/,
  );
});

it("refuses a module entry in a config built in code, which has no file to find it from", () => {
  expect(() => parseClusterConfig({ cluster: "c", souls: [{ id: "s", blueprint: "samantha" }], tools: [{ module: "./x.ts" }] }, "code")).toThrow(
    "code: tools[0].module: a tool module is loaded when the config is read from a file (loadClusterConfig, ensoul up); in code, give the tool itself: { tool }",
  );
});
