/**
 * A soul folder's own tools: every module in `tools/` beside the soul's entry module, each
 * exporting tools made with `defineTool()` (default export or named). They are the soul's
 * alone, and come before the cluster config's tools of the same name.
 *
 * Kept beside the blueprint (by identity) rather than in it, so a blueprint stays what
 * `defineSoul` made, and a soul that is not loaded from a folder simply has none.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import type { Tool } from "../../actors/tool/index.ts";

const TOOL_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];
const folderTools = new WeakMap<SoulBlueprint, Tool[]>();

function isTool(value: unknown): value is Tool {
  const v = value as Partial<Tool> | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && typeof v.run === "function" && typeof v.parse === "function";
}

/**
 * Loads `tools/` beside `entry` (the soul module just loaded, so TypeScript is already
 * registered) and keeps its tools for `blueprint`. A module that fails to load, or exports no
 * tool, is an error naming it: a soul that silently lost a tool would fail later, less clearly.
 */
export async function attachFolderTools(blueprint: SoulBlueprint, entry: string): Promise<void> {
  const dir = resolve(entry, "..", "tools");
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  const tools: Tool[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!TOOL_EXTENSIONS.includes(extname(name)) || name.endsWith(".d.ts") || /\.test\.[mc]?[jt]s$/.test(name)) continue;
    const file = join(dir, name);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`soul tool module ${file} cannot be loaded: ${(err instanceof Error ? err.message : String(err)).split("\n")[0]}`);
    }
    const found = [...new Set(Object.values(mod).filter(isTool))];
    if (found.length === 0) throw new Error(`soul tool module ${file} exports no tool: export one made with defineTool()`);
    tools.push(...found);
  }
  if (tools.length > 0) folderTools.set(blueprint, tools);
}

/** The tools of the soul folder `blueprint` was loaded from (none for any other blueprint). */
export function toolsOfBlueprint(blueprint: SoulBlueprint | undefined): Tool[] {
  return blueprint === undefined ? [] : (folderTools.get(blueprint) ?? []);
}
