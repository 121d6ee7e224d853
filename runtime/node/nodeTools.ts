/**
 * A node's tools: the registry each soul calls through (config `tools`), and the tool actors
 * of the tools placed on this node.
 */
import { createToolRegistry, layeredRegistry, remoteTool, serveToolActor, type Tool, type ToolActorHandle, type ToolRegistry } from "../../actors/tool/index.ts";
import type { Bus } from "../bus/index.ts";
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
 * Starts the tool actors of the tools placed on this node and waits for the bus to take their
 * subscriptions, as for skill gates (nodeSkillGates.ts says why): a refused one stops the
 * node's start with what to grant, instead of a node that says it is ready while that tool's
 * calls go unanswered.
 */
export async function startNodeTools(entries: readonly ToolConfigEntry[], nodeId: string, bus: Bus, cluster: string): Promise<ToolActorHandle[]> {
  const handles: ToolActorHandle[] = [];
  for (const entry of entries) {
    if ("tool" in entry && toolNodes(entry).includes(nodeId)) handles.push(serveToolActor(bus, cluster, entry.tool));
  }
  const outcomes = await Promise.allSettled(handles.map((h) => h.ready()));
  const refused = outcomes.findIndex((r) => r.status === "rejected");
  if (refused >= 0) {
    await Promise.allSettled(handles.map((h) => h.stop()));
    const { tool, subject } = handles[refused] as ToolActorHandle;
    const reason = (outcomes[refused] as PromiseRejectedResult).reason;
    throw new Error(
      `node ${nodeId} cannot serve tool '${tool}': ${reason instanceof Error ? reason.message : String(reason)}; ` +
        `its NATS user needs permission to subscribe to ${subject} in queue group 'tool-${tool}' ` +
        `(\`ensoul nats-config --user <user>:role=node:tools=${tool}\` grants it)`,
    );
  }
  return handles;
}
