/**
 * No floating promise in ensoul's sources: a promise nobody awaits or catches turns a failure
 * into an unhandled rejection, which may end the process (issue 23, item 6). `void p` does not
 * count as handled: its rejection is just as unhandled. oxlint's type-aware
 * `no-floating-promises` (tsgolint, which reads the project with TypeScript 7) checks it with
 * the rules in `.oxlintrc.json`; `npm run lint` runs the same by hand.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { tempDirs } from "../../support/tempDirs.ts";

const repo = resolve(import.meta.dirname, "../../..");
const oxlint = join(repo, "node_modules", "oxlint", "bin", "oxlint");
const SOURCES = ["actors", "runtime", "bridges", "souls", "api"];

const dirs = tempDirs("ensoul-lint-");
afterAll(() => dirs.cleanup());

/** The locations (`file:line:col`) of the floating promises oxlint finds under `roots` of `cwd`. */
async function floating(cwd: string, roots: string[]): Promise<string[]> {
  const args = [oxlint, "--type-aware", "-c", join(repo, ".oxlintrc.json"), "--format=unix", ...roots];
  const out = await promisify(execFile)(process.execPath, args, { cwd, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout }) => stdout,
    (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ""}${e.stderr ?? ""}`,
  );
  return out
    .split("\n")
    .filter((line) => line.includes("no-floating-promises"))
    .map((line) => line.split(": ")[0]!);
}

it("finds a floating promise, a voided one among them, and passes one that is caught", async () => {
  const root = dirs.make();
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, target: "es2022", module: "nodenext", noEmit: true }, include: ["src"] }));
  writeFileSync(
    join(root, "src", "sample.ts"),
    [
      "async function prune(): Promise<void> {}",
      "export function floats(): void {",
      "  prune();",
      "  void prune();",
      "  prune().catch(() => undefined);",
      "}",
      "",
    ].join("\n"),
  );
  expect(await floating(root, ["src"])).toEqual(["src/sample.ts:3:3", "src/sample.ts:4:8"]);
}, 60_000);

it("ensoul's sources have none (every promise is awaited, returned or caught)", async () => {
  expect(await floating(repo, SOURCES)).toEqual([]);
}, 120_000);
