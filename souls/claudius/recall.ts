/**
 * The daimonic whisper of this turn, as the pipeline should see it.
 *
 * The soul runtime recalls a pending whisper into the turn's working memory before the
 * process runs: one assistant memory in the `daimonicIntuition` region, already formatted as
 * the `## Daimonic Intuition` block (TurnRunner `#recall`), and it consumes the whisper when
 * the turn commits. Claudius's pipeline has its own place for the intuition (section 3b of the
 * prompt, after the soul state), so the process takes the recalled memory out of the memory it
 * hands the pipeline and passes the whisper as the pipeline's `whisper` option instead:
 * the model sees it exactly once, where the reference puts it, and the region cannot make the
 * pipeline think the thread has started (a first turn is one with no non-system memory).
 *
 * The whisper is read from the recalled memory rather than from soul memory `daimonicWhisper`:
 * that memory is what the runtime decided this turn hears (it skips internal perceptions,
 * and a whisper arriving mid-turn is for the next turn), so the two can never disagree.
 */
import { DAIMONIC_REGION } from "../../actors/daimon/index.ts";
import { regionOf, type Memory, type Whisper, type WorkingMemory } from "../../runtime/cognition/index.ts";

export interface Recalled {
  /** The memory without the recalled intuition. */
  memory: WorkingMemory;
  /** The whisper for the pipeline, when one was recalled. */
  whisper?: Whisper;
  /** The recalled memory itself, to hand on to a process this turn chains to. */
  recall?: Memory;
}

export function takeRecall(workingMemory: WorkingMemory): Recalled {
  const recall = workingMemory.find((m) => regionOf(m) === DAIMONIC_REGION);
  if (!recall) return { memory: workingMemory };
  const memory = workingMemory.withoutRegions(DAIMONIC_REGION);
  const content = whisperOf(recall.content);
  if (!content) return { memory };
  const source = typeof recall.metadata?.["source"] === "string" ? (recall.metadata["source"] as string) : "";
  return { memory, whisper: source ? { content, source } : { content }, recall };
}

/** Hands the recall on (an executeNow chain): the runtime takes it out again before the commit. */
export function withRecall(memory: WorkingMemory, recall: Memory | undefined): WorkingMemory {
  if (!recall) return memory;
  return memory.withoutRegions(DAIMONIC_REGION).withMemory(recall);
}

/** The whispered text inside the block: the line `<Daimon> whispers: <text>` in its fence. */
function whisperOf(block: string): string {
  for (const line of block.split("\n")) {
    const at = line.indexOf(" whispers: ");
    if (at >= 0) return line.slice(at + " whispers: ".length).trim();
  }
  // A block in some other shape (a blueprint's own integrator wrote it): the text as it is.
  return block.replace(/^## Daimonic Intuition\s*/, "").trim();
}
