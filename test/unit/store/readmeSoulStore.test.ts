/** README's long-term memory example (the ```ts block that imports useSoulStore), run as written against the sources. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { createMemoryActorStore, createSoul, defineSoul, type MentalProcess } from "../../../actors/soul/index.ts";
import { record, said } from "../../support/soul/helpers.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

it("runs README's process that remembers with useSoulStore", async () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = readme.split("```ts\n").find((b) => b.startsWith('import { useActions, usePerceptions, useSoulStore'))?.split("\n```")[0];
  expect(block, "README.md has a ```ts block importing useSoulStore").toBeDefined();
  const source = `${(block as string).replace('from "ensoul"', `from ${JSON.stringify(pathToFileURL(join(root, "api/index.ts")).href)}`)}\nexport { remembering };\n`;
  const dir = mkdtempSync(join(tmpdir(), "ensoul-readme-store-"));
  try {
    const file = join(dir, "remembering.ts");
    writeFileSync(file, source);
    const { remembering } = (await import(pathToFileURL(file).href)) as { remembering: MentalProcess };
    const blueprint = defineSoul({ name: "Rem", persona: "remembers", initialProcess: remembering, processes: { remembering } });
    const soul = createSoul({ blueprint, id: "rem", store: createMemoryActorStore("rem") });
    const log = record(soul);
    for (const text of ["my sister lives in Oslo", "the weather is grey", "what about my sister?"]) {
      await soul.perceive(said(text));
      await soul.idle();
    }
    expect(log.errors()).toEqual([]);
    expect(log.said().at(-1)).toBe("That reminds me of: what about my sister?; my sister lives in Oslo");
    await soul.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
