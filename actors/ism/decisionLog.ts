import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import type { ActionResult, DecisionLogEntry } from "./types.ts";

/**
 * The decision log is the ISM's internal memory of its own choices. The machine keeps it as
 * structured entries (a handler cannot lose it by replacing the internal memory it was
 * given), renders it into every choice prompt, and mirrors it into the internal memory so a
 * handler can read it too.
 */

/** The internal-memory region that mirrors the decision log. */
export const DECISIONS_REGION = "ism-decisions";

/** What the prompt shows before anything was chosen. */
export const FIRST_ITERATION = "(first iteration)";

const RESULT_WORDS: Record<ActionResult["result"], string> = {
  continued: "continued the loop",
  ended: "ended the loop",
  transitioned: "moved to another process",
  threw: "failed",
  skipped: "was skipped",
};

/** One line: `Loop 0: chose [Think] — reasoning`, plus what became of the choice. */
export function formatDecision(entry: DecisionLogEntry): string {
  if (entry.status === "failed" && entry.actions.length === 0) {
    return `Loop ${entry.loop}: no usable choice (failed: ${entry.error ?? "unknown error"})`;
  }
  let line = `Loop ${entry.loop}: chose [${entry.actions.join(", ")}] — ${entry.reasoning.trim() || "(no reasoning given)"}`;
  if (entry.status === "rejected") line += ` (rejected: ${entry.error ?? "invalid choice"})`;
  if (entry.status === "failed") line += ` (failed: ${entry.error ?? "no usable choice"})`;
  if (entry.results?.length) {
    line += ` → ${entry.results.map((r) => `${r.action} ${RESULT_WORDS[r.result]}`).join("; ")}`;
  }
  if (entry.status === "acted" && entry.error) line += ` (error: ${entry.error})`;
  return line;
}

export function formatDecisionLog(entries: readonly DecisionLogEntry[]): string {
  return entries.length ? entries.map(formatDecision).join("\n") : FIRST_ITERATION;
}

/** Rewrites the whole region each time, so the mirror never drifts from the entries or doubles up. */
export function mirrorDecisions(internalMemory: WorkingMemory, entries: readonly DecisionLogEntry[]): WorkingMemory {
  if (!entries.length) return internalMemory;
  return internalMemory.withRegion(
    DECISIONS_REGION,
    ...entries.map((entry) => ({ role: "assistant" as const, content: formatDecision(entry) })),
  );
}
