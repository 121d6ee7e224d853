/**
 * `ensoul --help` stays fast (test/bench/cli.bench.ts measures it: < 200 ms) only while
 * main.ts loads nothing but commander and what the help shows; every command imports its
 * heavy modules when it runs. This records every module the help really loads, from the
 * sources in a child process, and fails with the list when one of them would pull in the
 * bus, the node, the providers' SDKs, LMDB or a soul.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-help-");
afterAll(() => dirs.cleanup());

/** A resolve hook that writes each module it sees to $ENSOUL_TRACE_FILE (it runs on the loader's thread). */
const TRACE_HOOK = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.ENSOUL_TRACE_FILE, result.url + "\\n");
  return result;
}
`;
const REGISTER = (hook: string) => `import { register } from "node:module";
register(${JSON.stringify(hook)});
`;

/** The modules `ensoul --help` loads: repository paths, and npm packages by name; tsx's own loading left out. */
function modulesLoadedByHelp(): { files: string[]; packages: string[]; stdout: string } {
  const dir = dirs.make();
  const hook = join(dir, "traceHook.mjs");
  const register = join(dir, "register.mjs");
  const trace = join(dir, "trace.txt");
  writeFileSync(hook, TRACE_HOOK);
  writeFileSync(register, REGISTER(`file://${hook}`));
  writeFileSync(trace, "");
  // Registered after tsx, so its hook sees what tsx resolves.
  const r = spawnSync(process.execPath, ["--import", "tsx", "--import", register, join(repoRoot, "runtime", "cli", "main.ts"), "--help"], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ENSOUL_TRACE_FILE: trace },
  });
  expect(r.status, r.stderr).toBe(0);
  const urls = [...new Set(readFileSync(trace, "utf8").split("\n").filter((u) => u.startsWith("file://")))];
  const paths = urls.map((u) => relative(repoRoot, fileURLToPath(u)));
  const files = paths.filter((p) => !p.startsWith("node_modules/") && !p.startsWith(".."));
  const packages = [...new Set(paths.filter((p) => p.startsWith("node_modules/")).map((p) => p.split("/").slice(1, p.startsWith("node_modules/@") ? 3 : 2).join("/")))];
  return { files, packages: packages.filter((p) => p !== "tsx" && p !== "get-tsconfig" && p !== "esbuild" && p !== "resolve-pkg-maps"), stdout: r.stdout };
}

it("loads commander and the CLI's own light modules, nothing of the bus, node, providers, store, actors or souls", () => {
  const { files, packages, stdout } = modulesLoadedByHelp();
  expect(stdout).toMatch(/^Usage: ensoul /m);
  expect(files).toContain("runtime/cli/main.ts");
  expect(packages).toEqual(["commander"]);
  const heavy = files.filter((f) => /^(actors|souls|bridges)\//.test(f) || /^runtime\/(bus|node|providers|store|cognition|inspect)\/[^/]+\.ts$/.test(f));
  expect(heavy).toEqual([]);
});
