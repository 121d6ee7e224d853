/**
 * Reads a cluster config file: YAML (`.yaml`, `.yml`), JSON, or a TypeScript/JavaScript
 * module whose default export is the config (or a function returning it). Relative paths
 * inside the config (`data`, a daimon's `personaFile`, a soul's `blueprint` path, a tool's
 * `module`) are relative to the config file, so the same file works from any working directory.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, extname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { parseClusterConfig, type ClusterConfig } from "./clusterConfig.ts";
import { ConfigError } from "./configError.ts";
import { describeLoadError } from "./soulLoadError.ts";
import { importModule, isSoulPath, loadSoulModule, SoulModuleError } from "./soulModule.ts";
import { isTool } from "./toolConfig.ts";

export interface LoadedClusterConfig {
  config: ClusterConfig;
  /** The file as the user named it (what errors show). */
  file: string;
  /** Absolute directory of the file: what relative paths in it are relative to. */
  baseDir: string;
  /** Daimon personas read from their files, by index into `config.daimons`. */
  personas: Map<number, string>;
}

export const CONFIG_FILE_CANDIDATES = ["ensoul.yaml", "ensoul.yml", "ensoul.config.ts", "ensoul.config.js"] as const;

/** The config file named, or the first candidate found in `cwd`. */
export function findConfigFile(named: string | undefined, cwd = process.cwd()): string {
  if (named) return named;
  const found = CONFIG_FILE_CANDIDATES.find((c) => existsSync(resolve(cwd, c)));
  if (!found) throw new ConfigError("ensoul up", "", `no config file given, and none of ${CONFIG_FILE_CANDIDATES.join(", ")} is in ${cwd}`);
  return found;
}

export async function loadClusterConfig(file: string, cwd = process.cwd()): Promise<LoadedClusterConfig> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new ConfigError(file, "", "no such file");
  const ext = extname(path).toLowerCase();
  let raw: unknown;
  if (ext === ".yaml" || ext === ".yml" || ext === ".json") {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw new ConfigError(file, "", `cannot read: ${(err as Error).message}`);
    }
    try {
      raw = ext === ".json" ? JSON.parse(text) : parseYaml(text);
    } catch (err) {
      if (err instanceof YAMLParseError) {
        const at = err.linePos?.[0];
        throw new ConfigError(file, "", `not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ""}: ${err.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")}`);
      }
      throw new ConfigError(file, "", `not valid ${ext === ".json" ? "JSON" : "YAML"}: ${(err as Error).message.split("\n")[0]}`);
    }
  } else if ([".ts", ".mts", ".js", ".mjs"].includes(ext)) {
    let mod: { default?: unknown };
    try {
      mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (err) {
      throw new ConfigError(file, "", `cannot load: ${(err as Error).message.split("\n")[0]}`);
    }
    raw = typeof mod.default === "function" ? await (mod.default as () => unknown)() : mod.default;
    if (raw === undefined) throw new ConfigError(file, "", "has no default export (export default { cluster, souls, ... })");
  } else {
    throw new ConfigError(file, "", `unknown config format '${ext || "(none)"}': use .yaml, .yml, .json or .ts`);
  }
  if (raw === null || raw === undefined) throw new ConfigError(file, "", "is empty");

  const baseDir = dirname(path);
  const config = parseClusterConfig(await withToolsFromModules(await withSoulsFromPaths(raw, file, baseDir), file, baseDir), file);
  if (config.data !== undefined && !isAbsolute(config.data)) config.data = resolve(baseDir, config.data);
  const personas = new Map<number, string>();
  config.daimons.forEach((d, i) => {
    if (d.persona !== undefined || d.personaFile === undefined) return;
    const personaPath = resolve(baseDir, d.personaFile);
    try {
      personas.set(i, readFileSync(personaPath, "utf8"));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ConfigError(file, `daimons[${i}].personaFile`, `cannot read ${d.personaFile}${code ? ` (${code})` : ""}`);
    }
  });
  return { config, file, baseDir, personas };
}

/** The config with each `blueprint` that names a path replaced by the blueprint it loads (relative to the config file). */
async function withSoulsFromPaths(raw: unknown, file: string, baseDir: string): Promise<unknown> {
  const souls = (raw as { souls?: unknown } | null)?.souls;
  if (!Array.isArray(souls)) return raw;
  const loaded = await Promise.all(
    souls.map(async (soul: unknown, i) => {
      const ref = (soul as { blueprint?: unknown } | null)?.blueprint;
      if (typeof ref !== "string" || !isSoulPath(ref)) return soul;
      try {
        return { ...(soul as object), blueprint: await loadSoulModule(ref, baseDir) };
      } catch (err) {
        throw new ConfigError(file, `souls[${i}].blueprint`, err instanceof Error ? err.message : String(err), err instanceof SoulModuleError ? err.detail : undefined);
      }
    }),
  );
  return { ...(raw as object), souls: loaded };
}

/**
 * The config with each tool entry that names a `module` replaced by the `tool` entry it loads
 * (toolConfig.ts): `{ module, export?, ...rest }` becomes `{ tool, ...rest }`, so `node` and
 * `souls` are checked as for any tool. The module path is relative to the config file.
 */
async function withToolsFromModules(raw: unknown, file: string, baseDir: string): Promise<unknown> {
  const tools = (raw as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return raw;
  const loaded = await Promise.all(
    tools.map(async (entry: unknown, i) => {
      if (typeof entry !== "object" || entry === null || !("module" in entry) || "tool" in entry) return entry;
      const { module: ref, export: name, ...rest } = entry as { module: unknown; export?: unknown };
      const fail = (field: string, problem: string, detail?: string) => new ConfigError(file, `tools[${i}].${field}`, problem, detail);
      if (typeof ref !== "string" || ref.length === 0) throw fail("module", "must be the path of a module that exports a tool (relative to the config file)");
      if (name !== undefined && (typeof name !== "string" || name.length === 0)) throw fail("export", "must be the name of one of the module's exports");
      return { ...rest, tool: await toolOfModule(ref, name, baseDir, fail) };
    }),
  );
  return { ...(raw as object), tools: loaded };
}

/** The tool that module `ref` exports as `name` (its default export when no name is given). */
async function toolOfModule(ref: string, name: string | undefined, baseDir: string, fail: (field: string, problem: string, detail?: string) => ConfigError): Promise<unknown> {
  const path = resolve(baseDir, ref);
  if (!existsSync(path)) throw fail("module", `no such file: ${ref} (looked for ${path})`);
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(path);
  } catch (err) {
    const problem = await describeLoadError(err, path);
    throw fail("module", `${ref} cannot be loaded: ${problem.summary}`, problem.detail);
  }
  const key = name ?? "default";
  const exported = Object.keys(mod).filter((k) => k !== "default").sort();
  const hint = exported.length > 0 ? ` (it exports ${exported.join(", ")})` : "";
  if (!(key in mod) || mod[key] === undefined) {
    throw name === undefined ? fail("module", `${ref} has no default export${hint}: name the tool's export with \`export:\``) : fail("export", `${ref} has no export '${name}'${hint}`);
  }
  const tool = mod[key];
  if (!isTool(tool)) throw fail(name === undefined ? "module" : "export", `${name === undefined ? "the default export" : `export '${name}'`} of ${ref} is not a tool: export one made with defineTool()`);
  return tool;
}

/** A config built in code: the same validation, personas read relative to `baseDir`. */
export function clusterConfigFrom(raw: unknown, options: { file?: string; baseDir?: string } = {}): LoadedClusterConfig {
  const file = options.file ?? "cluster config";
  const baseDir = options.baseDir ?? process.cwd();
  const config = parseClusterConfig(raw, file);
  const personas = new Map<number, string>();
  config.daimons.forEach((d, i) => {
    if (d.persona === undefined && d.personaFile !== undefined) {
      try {
        personas.set(i, readFileSync(resolve(baseDir, d.personaFile), "utf8"));
      } catch (err) {
        throw new ConfigError(file, `daimons[${i}].personaFile`, `cannot read ${d.personaFile} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
      }
    }
  });
  return { config, file, baseDir, personas };
}
