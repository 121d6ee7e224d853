import { currentCognition } from "../../runtime/cognition/index.ts";
import { TurnToolBox } from "../tool/index.ts";
import { requireRun } from "./ProcessRun.ts";
import { missingService } from "./SoulServices.ts";

/** What `useTool(name)` gives a process: call it with the tool's input, await its result. */
export type ToolFunction<I = unknown, O = unknown> = (input: I) => Promise<O>;

/**
 * Open Souls' `useTool(name)`: `const clock = useTool("clock"); const now = await clock({})`.
 * Each call is proposed to the soul's gate chain first and runs with the tool's timeout
 * (actors/tool TurnToolBox.ts). It throws what stopped it: ToolRejectedError (a gate, with
 * its reason: the process may try something else), ToolInputError, ToolTimeoutError,
 * ToolOutcomeUnknownError (a call cut short by a crash, not run again), ToolError.
 */
export function useTool<I = unknown, O = unknown>(name: string): ToolFunction<I, O> {
  const run = requireRun("useTool");
  const registry = run.host.services.tools;
  if (!registry) throw missingService(`useTool(${JSON.stringify(name)})`, "tools");
  // Asking for a tool the soul does not have is a mistake in the process: say so here, not at the call.
  if (!registry.get(name)) throw new Error(`useTool(): no tool named ${JSON.stringify(name)}; this soul has ${registry.names().join(", ") || "no tools"}`);
  const box = currentCognition().tools;
  if (!(box instanceof TurnToolBox)) throw new Error("useTool() must be called while a mental process runs (no tool box in this turn)");
  return async (input: I) => {
    run.assertLive();
    return (await box.invoke(name, input)) as O;
  };
}
