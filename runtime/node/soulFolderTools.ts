/**
 * A soul's own tools: every module in `tools/` beside a soul folder's entry module, each
 * exporting tools made with `defineTool()` (default export or named), and the tools a builtin
 * soul brings (Claudius's clock and notes). They are the soul's alone, and come before the
 * cluster config's tools of the same name.
 *
 * Kept beside the blueprint (by identity) rather than in it, so a blueprint stays what
 * `defineSoul` made, and a soul that is not loaded from a folder (nor builtin) simply has none.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import type { Tool } from "../../actors/tool/index.ts";
import type { Store } from "../store/index.ts";
import { claudius, claudiusTools } from "../../souls/claudius/index.ts";
import { isTool } from "./toolConfig.ts";

/** What the node gives a soul's own tools: its store, where Claudius keeps his notes (one notebook per soul). */
export interface SoulToolHost {
  readonly store: Pick<Store, "kv">;
}

/**
 * The builtin souls' own tools, as a soul folder's `tools/` would be, so every config that
 * runs the builtin (`blueprint: claudius`, `ensoul demo`) gives them to it without listing
 * them. Made per host, since a notebook lives in the host's store.
 */
const builtinTools = new Map<SoulBlueprint, (host: SoulToolHost) => Tool[]>([[claudius, ({ store }) => claudiusTools(store)]]);

const TOOL_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];
const folderTools = new WeakMap<SoulBlueprint, Tool[]>();

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

/**
 * The soul's own tools: those of the soul folder `blueprint` was loaded from, or of the builtin
 * soul it is (given `host`, which their state lives in); none for any other blueprint.
 */
export function toolsOfBlueprint(blueprint: SoulBlueprint | undefined, host?: SoulToolHost): Tool[] {
  if (blueprint === undefined) return [];
  const builtin = builtinTools.get(blueprint);
  if (builtin !== undefined) return host === undefined ? [] : builtin(host);
  return folderTools.get(blueprint) ?? [];
}
