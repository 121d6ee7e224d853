#!/usr/bin/env node
/**
 * The `ensoul` command.
 *
 * Installed from npm, it runs the compiled JavaScript in dist/: no TypeScript loader, so it
 * starts fast and compiles nothing at run time. The package ships no .ts sources.
 *
 * In a checkout with the sources (this repository, its tests, CI) it runs the sources next to
 * it through tsx instead, so an edit is live at once and a dist/ left from an older build can
 * never be what runs. It does so when ../runtime/cli/main.ts exists and tsx can be imported
 * (tsx is a dependency, so that is every checkout after `npm install`).
 */
import { existsSync } from "node:fs";

const source = new URL("../runtime/cli/main.ts", import.meta.url);
const built = new URL("../dist/runtime/cli/main.js", import.meta.url);

/** tsx's loader, or undefined when it is not installed (then the built JavaScript runs). */
async function tsxLoader() {
  try {
    return await import("tsx/esm/api");
  } catch {
    return undefined;
  }
}

const tsx = existsSync(source) ? await tsxLoader() : undefined;
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(built)) {
  await import(built.href);
} else {
  process.stderr.write("ensoul: dist/ is missing and there are no sources to run: run `npm run build` in the ensoul package\n");
  process.exitCode = 1;
}
