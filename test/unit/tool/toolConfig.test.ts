/** The cluster config's `tools`: TypeScript tools, placed or not, remote ones by name; unknown nodes and souls and twice-listed tools are refused. */
import { expect, it } from "vitest";
import { z } from "zod";
import { defineSoul, type MentalProcess } from "../../../actors/soul/index.ts";
import { defineTool } from "../../../actors/tool/index.ts";
import { parseClusterConfig } from "../../../runtime/node/index.ts";

const idle: MentalProcess = async ({ workingMemory }) => workingMemory;
const blueprint = defineSoul({ name: "S", persona: "", initialProcess: idle, processes: { idle } });
const clock = defineTool({ name: "clock", description: "time", input: z.object({}), run: () => 0 });
const base = { cluster: "c", nodes: ["a", "b"], souls: [{ id: "s1", blueprint, node: "a" }] };

it("accepts local, placed and remote tools", () => {
  const config = parseClusterConfig({ ...base, tools: [{ tool: clock, node: "b", souls: ["s1"] }, { name: "search", remote: true, idempotent: true, timeoutMs: 500 }] });
  expect(config.tools).toHaveLength(2);
  expect(parseClusterConfig(base).tools).toEqual([]);
});

it("refuses unknown nodes and souls, a tool listed twice, and a tool that is not one", () => {
  expect(() => parseClusterConfig({ ...base, tools: [{ tool: clock, node: "z" }] })).toThrow(/unknown node 'z'/);
  expect(() => parseClusterConfig({ ...base, tools: [{ tool: clock, souls: ["nobody"] }] })).toThrow(/unknown soul 'nobody'/);
  expect(() => parseClusterConfig({ ...base, tools: [{ tool: clock }, { name: "clock", remote: true }] })).toThrow(/tool 'clock' is listed twice/);
  expect(() => parseClusterConfig({ ...base, tools: [{ tool: { name: "x" } }] })).toThrow(/tool made with defineTool/);
});
