/**
 * The tools section of the cluster config: tools every soul (or the souls named) may call.
 *
 *   tools:
 *     - module: ./tools/clock.ts               # a module beside the config (YAML, JSON or TypeScript config)...
 *       export: clock                          # ...its export of that name (default: its default export)
 *     - tool: <a Tool made with defineTool>   # TypeScript config: the tool itself
 *       node: n2                               # either form: served as a tool actor on n2 (a token or a list); default: run in each soul's node
 *       souls: [claudius]                      # either form: only these souls may call it (default: every soul)
 *     - name: search                           # served outside ensoul (docs/PROTOCOL.md §14)
 *       remote: true
 *       idempotent: true
 *       timeoutMs: 5000
 *
 * A `module` entry is loaded when the config file is read (loadClusterConfig.ts), its path
 * relative to the config file like every path in it, and becomes a `tool` entry before this
 * schema sees it: the rest of the node knows one local form. Its export must be one tool made
 * with defineTool(); a module with several tools is listed once per tool, each with `export`.
 *
 * A tool placed on nodes (`node`) is called by every soul through its tool actor, even on
 * the node that serves it, so the queue group shares the calls and there is one way to call it.
 */
import { z } from "zod";
import type { Tool } from "../../actors/tool/index.ts";
import { token } from "./configFields.ts";

export function isTool(value: unknown): value is Tool {
  const v = value as Partial<Tool> | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && typeof v.run === "function" && typeof v.parse === "function";
}

const common = {
  /** The souls that may call it (default: every soul). */
  souls: z.array(token).optional(),
};

const localTool = z.strictObject({
  ...common,
  tool: z.custom<Tool>(isTool, "must be a tool made with defineTool() (a TypeScript config)"),
  /** Served as a tool actor on these nodes instead of in each soul's node. */
  node: z.union([token, z.array(token).min(1)]).optional(),
});

const remote = z.strictObject({
  ...common,
  name: token,
  remote: z.literal(true),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  idempotent: z.boolean().optional(),
  timeoutMs: z.number().int().positive().optional(),
});

export type ToolConfigEntry = z.infer<typeof localTool> | z.infer<typeof remote>;

/** The entry's schema is picked by its `tool` key, so an error names the wrong field instead of "no union member matched". */
export const toolSpec = z.unknown().transform((value, ctx): ToolConfigEntry => {
  if (typeof value === "object" && value !== null && "module" in value && !("tool" in value)) {
    // Only a config read from its file has a folder to find the module in (loadClusterConfig.ts turns it into `tool`).
    ctx.addIssue({ code: "custom", message: "a tool module is loaded when the config is read from a file (loadClusterConfig, ensoul up); in code, give the tool itself: { tool }", path: ["module"] });
    return z.NEVER;
  }
  const schema = typeof value === "object" && value !== null && "tool" in value ? localTool : remote;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path as (string | number)[] });
  return z.NEVER;
});

/** The nodes an entry's tool actor runs on (none: it runs in each soul's node, or outside ensoul). */
export function toolNodes(entry: ToolConfigEntry): string[] {
  if (!("tool" in entry) || entry.node === undefined) return [];
  return Array.isArray(entry.node) ? entry.node : [entry.node];
}

/** The checks that need the rest of the config: known nodes and souls, one entry per tool name. */
export function checkTools(
  entries: readonly ToolConfigEntry[],
  nodes: ReadonlySet<string> | null,
  souls: ReadonlySet<string>,
  issue: (path: (string | number)[], message: string) => void,
): void {
  const names = entries.map((e) => ("tool" in e ? e.tool.name : e.name));
  entries.forEach((entry, i) => {
    if (names.indexOf(names[i] as string) !== i) issue(["tools", i], `tool '${names[i]}' is listed twice; list its nodes and souls in one entry`);
    toolNodes(entry).forEach((n) => {
      if (nodes && !nodes.has(n)) issue(["tools", i, "node"], `unknown node '${n}' (nodes: ${[...nodes].join(", ")})`);
    });
    entry.souls?.forEach((s, j) => {
      if (!souls.has(s)) issue(["tools", i, "souls", j], `unknown soul '${s}' (souls in this config: ${[...souls].join(", ")})`);
    });
  });
}
