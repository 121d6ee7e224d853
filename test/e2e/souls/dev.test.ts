/**
 * `ensoul dev ./souls/ada`: the soul answers; its code changes and the next answer is the new
 * code's, with the memory kept (the turn count goes on); code that does not load is shown and
 * the last good version keeps answering.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "../../support/cluster/cliProcess.ts";
import { startEnsoul } from "../../support/cli/runEnsoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-dev-");
afterAll(() => dirs.cleanup());
const soulApi = pathToFileURL(join(repoRoot, "actors/soul/index.ts")).href;

const speaking = (words: string) => `import { useActions, usePerceptions, useSoulMemory, type MentalProcess } from ${JSON.stringify(soulApi)};
export const listening: MentalProcess = async ({ workingMemory }) => {
  const count = useSoulMemory<number>("count", 0);
  count.current += 1;
  useActions().speak(\`${words} #\${count.current}: \${usePerceptions().invokingPerception.content}\`);
  return workingMemory;
};
`;

it("reloads a soul's code when it changes, keeps its memory, and keeps the last good version on a syntax error, shown where it is", async () => {
  const dir = dirs.make();
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  const folder = join(dir, "souls", "ada");
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "listening.ts"), speaking("first"));
  writeFileSync(
    join(folder, "index.ts"),
    `import { defineSoul } from ${JSON.stringify(soulApi)};\nimport { listening } from "./listening.ts";\nexport default defineSoul({ name: "Ada", persona: "Ada.", initialProcess: listening, processes: { listening } });\n`,
  );
  const dev = startEnsoul(["dev", "./souls/ada", "--data", join(dir, "data")], { cwd: dir, timeoutMs: 90_000 });
  try {
    await dev.waitFor(/Ada ·/, 30_000);
    dev.type("one");
    await dev.waitFor(/first #1: one/, 20_000);

    writeFileSync(join(folder, "listening.ts"), speaking("second"));
    await dev.waitFor(/listening\.ts changed: reloading \(memory kept\)/, 20_000);
    await dev.waitFor(/Ada ·[\s\S]*Ada ·/, 30_000);
    dev.type("two");
    await dev.waitFor(/second #2: two/, 20_000);

    writeFileSync(join(folder, "listening.ts"), "export const listening = async ({ workingMemory }) => { this is not code\n");
    await dev.waitFor(/does not load; the last good version keeps running/, 20_000);
    // The compile error as esbuild reports it: file, line and column, the message, the source line.
    await dev.waitFor(/listening\.ts:1:\d+: Expected ";" but found "is"/, 5_000);
    expect(dev.stderr()).toMatch(/souls[\\/]ada[\\/]listening\.ts:1:\d+:\n\s+1 │ .*this is not code\n/);
    dev.type("three");
    await dev.waitFor(/second #3: three/, 20_000);
  } finally {
    dev.child.kill("SIGINT");
    await dev.exited;
  }
  expect(dev.stderr()).not.toMatch(/SIGTERM, finishing/);
}, 120_000);
