/**
 * The soul and tools of the tool fault crash test (test/integration/tool/toolFaultCrash.test.ts).
 * On a perception its process calls `notes` and `pay` (neither idempotent: each run appends a
 * line to a file, a side effect outside the soul's store) and `clock` (idempotent), in the
 * order it is given, and speaks what came back. The order stands for the model: a turn run
 * again after a crash may call the same tools in another order.
 */
import { appendFileSync } from "node:fs";
import { z } from "zod";
import { defineSoul, useActions, useTool, type MentalProcess, type SoulBlueprint } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, type ToolRegistry } from "../../../actors/tool/index.ts";

export type ToolOrder = "forward" | "reverse";

const CALLS = [
  { tool: "notes", input: { text: "first" } },
  { tool: "pay", input: { amount: 5 } },
  { tool: "clock", input: {} },
] as const;

export function toolOrderTools(sideEffects: string): ToolRegistry {
  const effect = (line: string) => appendFileSync(sideEffects, `${line}\n`);
  const notes = defineTool({ name: "notes", description: "appends a note", input: z.object({ text: z.string() }), run: ({ text }, ctx) => (effect(`notes ${text} ${ctx.callId}`), `noted ${text}`) });
  const pay = defineTool({ name: "pay", description: "pays", input: z.object({ amount: z.number() }), run: ({ amount }, ctx) => (effect(`pay ${amount} ${ctx.callId}`), `paid ${amount}`) });
  const clock = defineTool({ name: "clock", description: "the time", input: z.object({}), idempotent: true, run: () => "noon" });
  return createToolRegistry([notes, pay, clock]);
}

export function toolOrderBlueprint(order: ToolOrder): SoulBlueprint {
  const calls = order === "forward" ? CALLS : [...CALLS].reverse();
  const main: MentalProcess = async ({ workingMemory }) => {
    const results: string[] = [];
    for (const { tool, input } of calls) {
      try {
        results.push(`${tool}: ${String(await useTool(tool)(input))}`);
      } catch (err) {
        results.push(`${tool}: ${(err as Error).name}`);
      }
    }
    useActions().speak(results.sort().join(" | "));
    return workingMemory;
  };
  return defineSoul({ name: "Payer", persona: "pays and takes notes", initialProcess: main, processes: { main } });
}
