/** README's tool example (the ```js block that starts with `// clock.mjs`), run as written against the sources. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect, it, vi } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));

it("runs README's soul that uses a tool", async () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = readme.split("```js\n").find((b) => b.startsWith("// clock.mjs"))?.split("\n```")[0];
  expect(block, "README.md has a ```js block starting with // clock.mjs").toBeDefined();
  const source = (block as string)
    .replace('from "ensoul"', `from ${JSON.stringify(pathToFileURL(join(root, "api/index.ts")).href)}`)
    .replace('from "zod"', `from ${JSON.stringify(pathToFileURL(join(root, "node_modules/zod/index.js")).href)}`);
  const file = join(mkdtempSync(join(tmpdir(), "ensoul-readme-tool-")), "clock.mjs");
  writeFileSync(file, source);
  const lines: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));
  try {
    await import(pathToFileURL(file).href);
  } finally {
    log.mockRestore();
  }
  expect(lines[0]).toMatch(/^tool\.call teller:tool:[A-Za-z0-9_-]{22}$/);
  expect(lines[1]).toMatch(/^tool\.result teller:tool:[A-Za-z0-9_-]{22}$/);
  expect(lines[2]).toMatch(/^In Oslo it is \d\d:\d\d:\d\d\.$/);
});
