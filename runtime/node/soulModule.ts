/**
 * A soul from a path: `ensoul chat ./souls/ada`, `blueprint: ./souls/ada` in a cluster config.
 * The path is a module (TypeScript or JavaScript) that exports a blueprint made with
 * `defineSoul()` (as its default export, or as its only exported blueprint), or a folder with
 * such a module as `index.ts`, `index.js`, `index.mjs`, `soul.ts` or `soul.js`.
 *
 * TypeScript is loaded with tsx, registered once for the whole process rather than through a
 * separate namespace: the soul's own imports of `ensoul` must be the very modules the runtime
 * runs (one turn context, one set of hooks), or its hooks would find no turn.
 */
import { existsSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import { attachFolderTools } from "./soulFolderTools.ts";
import { describeLoadError } from "./soulLoadError.ts";

const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];
const FOLDER_ENTRIES = ["index.ts", "index.js", "index.mjs", "soul.ts", "soul.js"];

export class SoulModuleError extends Error {
  /** Lines below the message, when it has more to show (a syntax error's source line, as esbuild reports it). */
  readonly detail: string | undefined;
  constructor(path: string, why: string, detail?: string) {
    super(`${path} is not a soul: ${why}`);
    this.name = "SoulModuleError";
    this.detail = detail;
  }
}

/** A blueprint reference that names a path rather than a builtin soul (`./ada`, `/x/ada.ts`, `souls/ada`). */
export function isSoulPath(ref: string): boolean {
  return ref.startsWith(".") || isAbsolute(ref) || ref.includes("/") || ref.includes("\\") || MODULE_EXTENSIONS.includes(extname(ref));
}

export function isBlueprint(value: unknown): value is SoulBlueprint {
  const v = value as Partial<SoulBlueprint> | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && v.processes instanceof Map && typeof v.allows === "function";
}

/** The soul id a path suggests: its file or folder name, made a valid name (`./souls/ada.ts` → `ada`). */
export function soulIdOfPath(ref: string): string {
  const path = ref.replace(/[\\/]+$/, "");
  const name = basename(path, extname(path));
  const id = (name === "index" || name === "soul" ? basename(resolve(path, "..")) : name).replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
  return id || "soul";
}

function entryOf(path: string, shown: string): string {
  if (!existsSync(path)) throw new SoulModuleError(shown, "no such file or folder");
  if (!statSync(path).isDirectory()) {
    if (!MODULE_EXTENSIONS.includes(extname(path))) throw new SoulModuleError(shown, `a soul module is ${MODULE_EXTENSIONS.join(", ")}`);
    return path;
  }
  const entry = FOLDER_ENTRIES.map((f) => resolve(path, f)).find((f) => existsSync(f));
  if (!entry) throw new SoulModuleError(shown, `the folder has none of ${FOLDER_ENTRIES.join(", ")}`);
  return entry;
}

let tsxRegistered = false;

/**
 * Imports a module by path, TypeScript too (tsx registered once); a config's tool modules load the
 * same way. Source maps are on from here (tsx turns them on too), so an error a soul built to
 * JavaScript with its map throws names the soul's own source (actors/soul/soulSource.ts).
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  process.setSourceMapsEnabled(true);
  if (/\.m?ts$/.test(file) && !tsxRegistered && !process.execArgv.some((a) => a.includes("tsx"))) {
    const { register } = await import("tsx/esm/api");
    register();
    tsxRegistered = true;
  }
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/** Loads the blueprint a path names, relative to `baseDir` (a config file's folder, or the working directory). */
export async function loadSoulModule(ref: string, baseDir = process.cwd()): Promise<SoulBlueprint> {
  const file = entryOf(resolve(baseDir, ref), ref);
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(file);
  } catch (err) {
    const problem = await describeLoadError(err, file);
    // A .ts file outside an ES module package is compiled as CommonJS: say what to change.
    const hint = /require\(\)|require\(esm\)|Cannot use import statement/.test(problem.summary) ? ' (souls are ES modules: give the project\'s package.json "type": "module", or name the files .mts)' : "";
    throw new SoulModuleError(ref, `it cannot be loaded: ${problem.summary}${hint}`, problem.detail);
  }
  if (isBlueprint(mod["default"])) return withFolderTools(withRag(mod["default"], file), file);
  const found = Object.entries(mod).filter(([, v]) => isBlueprint(v));
  if (found.length === 1) return withFolderTools(withRag(found[0]![1] as SoulBlueprint, file), file);
  if (found.length > 1) throw new SoulModuleError(ref, `it exports several blueprints (${found.map(([k]) => k).join(", ")}); export the one to run as default`);
  throw new SoulModuleError(ref, "it exports no blueprint: export default defineSoul({ ... })");
}

/** A soul folder's `tools/` (beside its entry module): the soul's own tools (soulFolderTools.ts). */
async function withFolderTools(blueprint: SoulBlueprint, file: string): Promise<SoulBlueprint> {
  await attachFolderTools(blueprint, file);
  return blueprint;
}

/** A soul folder's `rag/` (beside its entry module) is its blueprint store, unless the blueprint names one. */
function withRag(blueprint: SoulBlueprint, file: string): SoulBlueprint {
  const rag = resolve(file, "..", "rag");
  if (blueprint.ragDir !== undefined || !existsSync(rag) || !statSync(rag).isDirectory()) return blueprint;
  return Object.freeze({ ...blueprint, ragDir: rag });
}
