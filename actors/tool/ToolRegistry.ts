import type { Tool } from "./Tool.ts";

/** The tools a soul may call, by name: local ones and remote ones (remoteTool.ts) alike. */
export interface ToolRegistry {
  get(name: string): Tool | undefined;
  names(): string[];
}

export function createToolRegistry(tools: Iterable<Tool>): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`two tools are named ${tool.name}: tool names must be unique`);
    byName.set(tool.name, tool);
  }
  return { get: (name) => byName.get(name), names: () => [...byName.keys()] };
}

/** A soul's own tools first (its folder's), then the node's: a soul may shadow a cluster tool. */
export function layeredRegistry(...registries: ToolRegistry[]): ToolRegistry {
  return {
    get: (name) => registries.map((r) => r.get(name)).find((t) => t !== undefined),
    names: () => [...new Set(registries.flatMap((r) => r.names()))],
  };
}
