/**
 * Research with tools: when the turn has Claudius's clock and notes (a host gave them), the
 * ISM's Research action asks them, through the turn's tool box, so each call passes the
 * soul's gates and shows up as events. What they answer becomes the findings; a refused or
 * failed call is said as such, not hidden. The findings are outside text (a note may quote
 * what someone said): the Research handler keeps them as an untrusted memory, which every
 * prompt fences, so nothing here needs to (fencing twice would nest fences).
 */
import { currentCognition, type ToolOutcome } from "../../runtime/cognition/index.ts";

/** The findings, or undefined when the turn has neither tool (Research is then recall). */
export async function toolResearch(question: string): Promise<string | undefined> {
  const tools = currentCognition().tools;
  if (!tools) return undefined;
  const names = new Set(tools.specs().map((s) => s.name));
  const parts: string[] = [];
  if (names.has("clock")) parts.push(describe("the clock", await tools.call("clock", {}), (v) => `it is ${v.weekday}, ${v.iso}`));
  if (names.has("notes")) {
    parts.push(
      describe("my notes", await tools.call("notes", { action: "search", query: question, limit: 5 }), (v) =>
        Array.isArray(v.notes) && v.notes.length > 0 ? `my notes say: ${v.notes.map((n) => `"${String(n)}"`).join("; ")}` : "my notes have nothing on this",
      ),
    );
  }
  return parts.length > 0 ? parts.join(". ") : undefined;
}

function describe(what: string, outcome: ToolOutcome, ok: (value: Record<string, unknown>) => string): string {
  if (!outcome.ok) return `${what} could not be consulted (${String(outcome.value)})`;
  return ok((outcome.value ?? {}) as Record<string, unknown>);
}
