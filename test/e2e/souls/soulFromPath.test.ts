/**
 * A user's own soul, from a path, everywhere a builtin one runs: `ensoul chat ./souls/ada`
 * (a TypeScript folder and a JavaScript module), `blueprint: ./souls/ada` in a YAML config
 * (relative to the config file) for `ensoul up`, and clear errors for a path that is not a soul.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decodeEnvelope, isKind } from "../../../runtime/bus/index.ts";
import { loadClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { repoRoot } from "../../support/cluster/cliProcess.ts";
import { runEnsoul } from "../../support/cli/runEnsoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-soul-path-");
afterAll(() => dirs.cleanup());

const soulApi = pathToFileURL(join(repoRoot, "actors/soul/index.ts")).href;

/** A soul folder as a user writes one: a process file and an index that defines the soul. */
function writeAda(dir: string): string {
  // As in a project made by `ensoul init`: ES modules.
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  const folder = join(dir, "souls", "ada");
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "listening.ts"),
    `import { useActions, usePerceptions, type MentalProcess } from ${JSON.stringify(soulApi)};
export const listening: MentalProcess = async ({ workingMemory }) => {
  useActions().speak(\`Ada heard: \${usePerceptions().invokingPerception.content}\`);
  return workingMemory;
};
`,
  );
  writeFileSync(
    join(folder, "index.ts"),
    `import { defineSoul } from ${JSON.stringify(soulApi)};
import { listening } from "./listening.ts";
export default defineSoul({ name: "Ada", persona: "# Ada\\nA patient tutor.", initialProcess: listening, processes: { listening } });
`,
  );
  return folder;
}

describe("a soul from a path", () => {
  it("ensoul chat ./souls/ada runs a TypeScript soul folder, its memory under its folder's name", async () => {
    const dir = dirs.make();
    writeAda(dir);
    const result = await runEnsoul(["chat", "./souls/ada", "--data", join(dir, "data")], { cwd: dir, lines: ["hello there"] });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Ada heard: hello there");
  });

  it("ensoul chat runs a JavaScript module too", async () => {
    const dir = dirs.make();
    writeFileSync(
      join(dir, "bob.mjs"),
      `import { defineSoul, useActions } from ${JSON.stringify(soulApi)};
const talk = async ({ workingMemory }) => { useActions().speak("Bob here."); return workingMemory; };
export const bob = defineSoul({ name: "Bob", persona: "Bob.", initialProcess: talk, processes: { talk } });
`,
    );
    const result = await runEnsoul(["chat", "./bob.mjs", "--data", join(dir, "data")], { cwd: dir, lines: ["hi"] });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Bob here.");
  });

  it("says clearly why a path is not a soul", async () => {
    const dir = dirs.make();
    mkdirSync(join(dir, "empty"));
    writeFileSync(join(dir, "plain.mjs"), "export const answer = 42;\n");
    writeFileSync(join(dir, "broken.mjs"), "export default {{ not javascript\n");
    const cases: [string, RegExp][] = [
      ["./missing", /\.\/missing is not a soul: no such file or folder/],
      ["./empty", /\.\/empty is not a soul: the folder has none of index\.ts/],
      ["./plain.mjs", /exports no blueprint: export default defineSoul/],
      // A syntax error where esbuild finds it: file, line, column and message, then the source line.
      ["./broken.mjs", /broken\.mjs is not a soul: it cannot be loaded: broken\.mjs:1:\d+: Expected .*\n[\s\S]*1 │ export default \{\{ not javascript/],
    ];
    for (const [path, message] of cases) {
      const result = await runEnsoul(["chat", path, "--data", join(dir, "data")], { cwd: dir, lines: ["hi"] });
      expect(result.code, path).not.toBe(0);
      expect(result.stderr, path).toMatch(message);
    }
  });

  it("blueprint: ./souls/ada in a YAML config loads relative to the config file, and runs in a node", async () => {
    const dir = dirs.make();
    writeAda(dir);
    writeFileSync(join(dir, "ensoul.yaml"), "cluster: mine\nsouls:\n  - { id: ada, blueprint: ./souls/ada }\n");
    // From another working directory: the path is the config's, not the shell's.
    const loaded = await loadClusterConfig(join(dir, "ensoul.yaml"), repoRoot);
    expect(loaded.config.souls[0]?.blueprint).toMatchObject({ name: "Ada" });
    const node = await startNode({ config: loaded, data: join(dir, "data"), store: { noSync: true }, log: () => undefined });
    try {
      const heard = new Promise<string>((resolve) =>
        node.bus.subscribe(node.subjects.says("ada"), (m) => {
          const d = decodeEnvelope(m.data);
          if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final) resolve(d.envelope.body.text);
        }),
      );
      const soul = await node.soul("ada");
      await soul.perceive({ action: "said", content: "from yaml", name: "Tom" });
      expect(await heard).toBe("Ada heard: from yaml");
    } finally {
      await node.stop();
    }
    writeFileSync(join(dir, "bad.yaml"), "souls:\n  - { id: x, blueprint: ./souls/nobody }\n");
    await expect(loadClusterConfig(join(dir, "bad.yaml"))).rejects.toThrow(/souls\[0\]\.blueprint: \.\/souls\/nobody is not a soul: no such file or folder/);
  });
});
