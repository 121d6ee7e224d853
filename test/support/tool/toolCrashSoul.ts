/**
 * The soul and tools of the tool crash test (test/integration/tool/toolCrash.test.ts). On
 * "write" its process calls `notes` twice (not idempotent: each call appends a line to a file,
 * a side effect outside the soul's store) and then `clock` (idempotent), and speaks what came
 * back. `hangOnSecond` makes the second notes call write its line and never return, so the
 * child process can be killed in the middle of it.
 */
import { appendFileSync } from "node:fs";
import { z } from "zod";
import { defineSoul, useActions, useTool, type MentalProcess } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, type ToolRegistry } from "../../../actors/tool/index.ts";

export interface ToolCrashOptions {
  /** The notes tool's side effects go here, one line per run. */
  sideEffects: string;
  hangOnSecond?: () => void;
  onClock?: () => void;
}

export function toolCrashTools(options: ToolCrashOptions): ToolRegistry {
  const notes = defineTool({
    name: "notes",
    description: "appends a note",
    input: z.object({ text: z.string() }),
    run: async ({ text }, ctx) => {
      appendFileSync(options.sideEffects, `${ctx.callId} ${text}\n`);
      if (text === "second" && options.hangOnSecond) {
        options.hangOnSecond();
        return new Promise<never>(() => {});
      }
      return `noted ${text}`;
    },
  });
  const clock = defineTool({ name: "clock", description: "the time", input: z.object({}), idempotent: true, run: () => (options.onClock?.(), "noon") });
  return createToolRegistry([notes, clock]);
}

const main: MentalProcess = async ({ workingMemory }) => {
  const notes = useTool<{ text: string }, string>("notes");
  const clock = useTool<Record<string, never>, string>("clock");
  const results: string[] = [];
  for (const call of [() => notes({ text: "first" }), () => notes({ text: "second" }), () => clock({})]) {
    try {
      results.push(await call());
    } catch (err) {
      results.push(`${(err as Error).name}: ${(err as Error).message}`);
    }
  }
  useActions().speak(results.join(" | "));
  return workingMemory;
};

export const toolCrashBlueprint = defineSoul({ name: "Noter", persona: "takes notes", initialProcess: main, processes: { main } });
