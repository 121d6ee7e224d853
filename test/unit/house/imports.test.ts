/**
 * DESIGN.md's import rules, checked on every run by dependency-cruiser with the rules in
 * `.dependency-cruiser.cjs`. A wrong import fails here with the rule's name, the import and
 * what the rule asks for.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { cruise, type ICruiseResult, type IViolation } from "dependency-cruiser";
import { afterAll, expect, it } from "vitest";
import { tempDirs } from "../../support/tempDirs.ts";

const repo = resolve(import.meta.dirname, "../../..");
const require = createRequire(import.meta.url);
const config = require(join(repo, ".dependency-cruiser.cjs")) as { forbidden: Array<{ name: string; comment: string }>; options: Record<string, unknown> };

function describeViolation(v: IViolation): string {
  const rule = config.forbidden.find((r) => r.name === v.rule.name);
  const path = v.cycle?.length ? [v.from, ...v.cycle.map((c) => c.name)].join(" → ") : `${v.from} → ${v.to}`;
  return `${v.rule.name}: ${path}${rule ? `\n    (${rule.comment})` : ""}`;
}

const dirs = tempDirs("ensoul-house-");
afterAll(() => dirs.cleanup());

/** Runs the rules over `roots` of the tree at `root`; the violations, described. */
async function violations(root: string, roots: string[]): Promise<string[]> {
  const previous = process.cwd();
  process.chdir(root); // the rules' paths are relative to the tree's root
  try {
    const options = { ...config.options, ...(root === repo ? {} : { tsConfig: undefined }) };
    const { output } = await cruise(roots, { ...options, ruleSet: { forbidden: config.forbidden }, validate: true } as never);
    const result = output as ICruiseResult;
    expect(result.summary.totalCruised).toBeGreaterThan(0); // it really read the sources
    return result.summary.violations.map(describeViolation);
  } finally {
    process.chdir(previous);
  }
}

it("names the rule a wrong import breaks", async () => {
  const root = dirs.make();
  const files: Record<string, string> = {
    "actors/soul/index.ts": `export * from "./soul.ts";`,
    "actors/soul/soul.ts": `export const soul = 1;`,
    "runtime/bus/index.ts": `export const bus = 1;`,
    "runtime/bus/upward.ts": `import { soul } from "../../actors/soul/index.ts"; export const u = soul;`,
    "runtime/cognition/index.ts": `import { bus } from "../bus/index.ts"; export const c = bus;`,
    "runtime/cognition/past.ts": `import { soul } from "../../actors/soul/soul.ts"; export const p = soul;`,
    "runtime/store/one.ts": `import { two } from "./two.ts"; export const one = () => two;`,
    "runtime/store/two.ts": `import { one } from "./one.ts"; export const two = () => one;`,
    "api/index.ts": `export { soul } from "../actors/soul/soul.ts";`,
    "runtime/bus/entry.ts": `import { soul } from "../../api/index.ts"; export const e = soul;`,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const found = (await violations(root, ["api", "actors", "runtime"])).map((v) => v.split("\n")[0]);
  expect(found).toEqual(
    expect.arrayContaining([
      "kernel-imports-no-actor-soul-bridge-or-composer: runtime/bus/upward.ts → actors/soul/index.ts",
      "cognition-imports-no-store-or-bus: runtime/cognition/index.ts → runtime/bus/index.ts",
      "import-other-folders-through-their-index: runtime/cognition/past.ts → actors/soul/soul.ts",
      expect.stringMatching(/^no-cycle-between-files: runtime\/store\/(one|two)\.ts → /),
      "package-entries-import-folders-through-their-index: api/index.ts → actors/soul/soul.ts",
      "nothing-imports-the-package-entries: runtime/bus/entry.ts → api/index.ts",
    ]),
  );
});

it("keeps DESIGN.md's layering: no cycles, the kernel imports no actor, cognition no store, folders through their index.ts", async () => {
  const roots = ["api", "actors", "runtime", "souls", "bridges"].filter((d) => existsSync(join(repo, d)));
  expect(await violations(repo, roots)).toEqual([]);
}, 60_000);
