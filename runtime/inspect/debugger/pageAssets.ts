/**
 * The debugger page's files for the server: index.html, app.css and the page's JavaScript.
 * From the package (dist/), the build has bundled the page already (scripts/build.mjs):
 * page/app.js lies beside this module and the three files are read as they are. From the
 * sources (tsx, tests), page/app.ts is bundled here with esbuild, once per process.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export interface PageAssets {
  html: string;
  css: string;
  js: string;
}

const pageFile = (name: string) => fileURLToPath(new URL(`./page/${name}`, import.meta.url));

let cached: Promise<PageAssets> | undefined;

/**
 * The page's TypeScript (page/app.ts) as one browser module. The build calls this too, so the
 * page is bundled one way wherever it runs.
 */
export async function bundlePage(entry = pageFile("app.ts")): Promise<string> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    target: "es2022",
    platform: "browser",
    minify: false,
    legalComments: "none",
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild produced nothing for ${entry}`);
  return output.text;
}

async function load(): Promise<PageAssets> {
  const [html, css] = await Promise.all([readFile(pageFile("index.html"), "utf8"), readFile(pageFile("app.css"), "utf8")]);
  const prebuilt = pageFile("app.js");
  const js = existsSync(prebuilt) ? await readFile(prebuilt, "utf8") : await bundlePage();
  return { html, css, js };
}

/** The page's three files, read (or bundled) once and then kept in memory. */
export function loadPageAssets(): Promise<PageAssets> {
  cached ??= load().catch((err: unknown) => {
    // A failed bundle is not cached: the next request tries again.
    cached = undefined;
    throw err;
  });
  return cached;
}
