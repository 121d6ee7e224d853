/**
 * docs/GUARANTEES.md names, for every promise, the test that proves it (`file › test name`). A
 * renamed or deleted test must not leave a promise pointing at nothing: every file it names
 * exists, and every test name it quotes (up to a `…`) is in that file.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../../..");
const doc = readFileSync(join(repo, "docs/GUARANTEES.md"), "utf8");

function testFiles(dir: string): string[] {
  return readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
  );
}
const all = testFiles("test");

/** A path as the doc writes it: whole (`test/...`), or a file name the rows before it gave in full. */
function resolveFile(named: string): string | undefined {
  if (named.startsWith("test/")) return all.includes(named) ? named : undefined;
  const found = all.filter((f) => basename(f) === named);
  return found.length === 1 ? found[0] : undefined;
}

interface Reference {
  file: string;
  names: string[];
}

/** Each `file.test.ts` of a table cell, with the `› name` parts that follow it in the same clause. */
function references(): Reference[] {
  const refs: Reference[] = [];
  for (const line of doc.split("\n").filter((l) => l.startsWith("|"))) {
    for (const clause of line.split(/;|\|/)) {
      const files = [...clause.matchAll(/`([\w./{},-]+\.test\.ts)`/g)].map((m) => m[1]!);
      for (const spec of files) {
        // `test/e2e/bridges/{a,b}.test.ts`: both.
        const expanded = /\{(.+)\}/.exec(spec) ? spec.replace(/\{(.+)\}/, "$1").split(",").map((alt, i, parts) => spec.replace(/\{.+\}/, parts[i]!)) : [spec];
        const after = clause.slice(clause.indexOf(spec) + spec.length);
        const names = after
          .split("›")
          .slice(1)
          .map((n) => n.split("…")[0]!.replace(/`[^`]*\.test\.ts`.*$/, "").trim())
          .filter((n) => n.length > 0);
        for (const file of expanded) refs.push({ file, names });
      }
    }
  }
  return refs;
}

it("every test docs/GUARANTEES.md names exists, under the name it quotes", () => {
  const refs = references();
  expect(refs.length).toBeGreaterThan(40); // it really read the tables
  const missing: string[] = [];
  for (const { file, names } of refs) {
    const path = resolveFile(file);
    if (!path) {
      missing.push(`${file}: no such test file (or more than one with that name)`);
      continue;
    }
    const text = readFileSync(join(repo, path), "utf8").replace(/\\"/g, '"');
    for (const name of names) if (!text.includes(name)) missing.push(`${path}: no test named "${name}"`);
  }
  expect(missing).toEqual([]);
});

it("every fault point of runtime/faults is in the table of points", async () => {
  const { FAULT_POINTS } = await import("../../../runtime/faults/index.ts");
  for (const point of FAULT_POINTS) expect(doc, point).toContain(`| \`${point}\` |`);
});
