/**
 * A node's tools: the registry each soul calls through (config `tools`), and the tool actors
 * of the tools placed on this node.
 */
import { createToolRegistry, layeredRegistry, remoteTool, serveToolActor, type Tool, type ToolActorHandle, type ToolRegistry } from "../../actors/tool/index.ts";
import type { Bus } from "../bus/index.ts";
import { confirmServed } from "./servedSubscriptions.ts";
import type { ToolConfigEntry } from "./toolConfig.ts";
import { toolNodes } from "./toolConfig.ts";

/**
 * The tools one soul may call: its folder's own first (they shadow the config's of the same
 * name), then the config's, local ones as they are, the rest through their tool actors.
 */
export function soulToolRegistry(entries: readonly ToolConfigEntry[], soulId: string, bus: Bus, cluster: string, own: readonly Tool[] = []): ToolRegistry | undefined {
  const tools: Tool[] = [];
  for (const entry of entries) {
    if (entry.souls !== undefined && !entry.souls.includes(soulId)) continue;
    if ("tool" in entry) {
      const { tool } = entry;
      tools.push(
        toolNodes(entry).length === 0
          ? tool
          : remoteTool({ bus, cluster, name: tool.name, description: tool.description, inputSchema: tool.inputSchema, idempotent: tool.idempotent, timeoutMs: tool.timeoutMs }),
      );
    } else {
      tools.push(
        remoteTool({
          bus,
          cluster,
          name: entry.name,
          ...(entry.description !== undefined ? { description: entry.description } : {}),
          ...(entry.inputSchema !== undefined ? { inputSchema: entry.inputSchema } : {}),
          ...(entry.idempotent !== undefined ? { idempotent: entry.idempotent } : {}),
          ...(entry.timeoutMs !== undefined ? { timeoutMs: entry.timeoutMs } : {}),
        }),
      );
    }
  }
  if (own.length === 0) return tools.length > 0 ? createToolRegistry(tools) : undefined;
  return layeredRegistry(createToolRegistry(own), createToolRegistry(tools));
}

/**
 * Starts the tool actors of the tools placed on this node, confirmed by the bus
 * (servedSubscriptions.ts): a refused one stops the node's start with what to grant.
 */
export async function startNodeTools(entries: readonly ToolConfigEntry[], nodeId: string, bus: Bus, cluster: string): Promise<ToolActorHandle[]> {
  const handles: ToolActorHandle[] = [];
  for (const entry of entries) {
    if ("tool" in entry && toolNodes(entry).includes(nodeId)) handles.push(serveToolActor(bus, cluster, entry.tool));
  }
  await confirmServed(handles, (h) => ({ what: `tool '${h.tool}'`, queue: `tool-${h.tool}`, grant: `tools=${h.tool}` }), nodeId);
  return handles;
}
