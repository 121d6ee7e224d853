#!/usr/bin/env node
/**
 * `npm run build` (and `prepare`, so `npm install` in a clone and `npm pack` build it): compiles
 * the sources to dist/ with tsconfig.build.json, JavaScript and .d.ts, then copies the files
 * the code reads at run time beside their compiled modules, at the same relative paths: a
 * soul's soul.md (`new URL("./soul.md", import.meta.url)`) and examples/ (`ensoul demo` reads
 * examples/demo.yaml as `../../examples/` from runtime/cli). dist/ is emptied first, so a
 * deleted source leaves no stale module behind.
 *
 * The debugger page (runtime/inspect/debugger/page/) is browser code, not a Node module: tsc
 * leaves it out (tsconfig.build.json), its index.html and app.css are copied as assets, and
 * its TypeScript is bundled by esbuild into page/app.js, through the same bundlePage() that
 * serves it from the sources (runtime/inspect/debugger/pageAssets.ts).
 */
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, "dist");
/** The compiled folders; keep in step with tsconfig.build.json's include. */
const SOURCE_DIRS = ["api", "runtime", "actors", "souls", "bridges"];
/** Folders read at run time as they are. */
const ASSET_DIRS = ["examples"];
/** The debugger page: its sources, and where its bundle goes. */
const PAGE_DIR = "runtime/inspect/debugger/page";
/** Files under the sources that only the tools read (the page's own typecheck project). */
const NOT_SHIPPED = new Set([join(PAGE_DIR, "tsconfig.json")]);

rmSync(out, { recursive: true, force: true });

// The compiler of this checkout, run by this node (no PATH or shell needed).
let tsc;
try {
  tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
} catch {
  console.error("build: the TypeScript compiler is missing (a devDependency): run `npm install` without --omit=dev first");
  process.exit(1);
}
const compiled = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], { cwd: root, stdio: "inherit" });
if (compiled.status !== 0) {
  console.error(`build: tsc failed (exit ${compiled.status ?? compiled.signal}); see its errors above`);
  process.exit(1);
}

/** Every file under `dir` that is not TypeScript source, as paths relative to the repo. */
function assetsUnder(dir) {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.endsWith(".ts"))
    .map((e) => relative(root, join(e.parentPath ?? e.path, e.name)))
    .filter((file) => !NOT_SHIPPED.has(file));
}

const copied = [...SOURCE_DIRS.flatMap(assetsUnder), ...ASSET_DIRS.flatMap(assetsUnder)];
for (const file of copied) cpSync(join(root, file), join(out, file));

// The page's bundle, by the module that bundles it at run time (compiled just above).
try {
  const { bundlePage } = await import(pathToFileURL(join(out, "runtime/inspect/debugger/pageAssets.js")).href);
  writeFileSync(join(out, PAGE_DIR, "app.js"), await bundlePage(join(root, PAGE_DIR, "app.ts")));
} catch (err) {
  console.error(`build: bundling the debugger page failed: ${err?.errors?.map((e) => e.text).join("; ") || err?.message || err}`);
  process.exit(1);
}
console.log(`build: ${out} (${copied.length} asset files copied, debugger page bundled)`);
