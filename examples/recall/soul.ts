/**
 * Recall: a soul with a small working-memory window that still remembers what it was told
 * long ago. Its process stores every fact a person tells it in its soul store
 * (`useSoulStore`, LMDB, written with the turn); its memory integrator keeps only the last
 * WINDOW memories of conversation, searches the store with the new perception, and puts the
 * best matches in a `recall` region before the process runs.
 *
 * In a project of your own, import from "ensoul" instead of "../../api/index.ts".
 */
import {
  defaultMemoryIntegrator,
  defineSoul,
  externalDialog,
  fenceUntrusted,
  useActions,
  usePerceptions,
  useSoulStore,
  type MemoryIntegrator,
  type MentalProcess,
} from "../../api/index.ts";

/** Memories of conversation kept in working memory; older ones live on only in the store. */
export const WINDOW = 6;
export const RECALL_REGION = "recall";
const RECALLED = 3;

export const recallIntegrator: MemoryIntegrator = async (args) => {
  const { perception, workingMemory } = args;
  // The window: every region (core, recall) and the last WINDOW other memories.
  const loose = workingMemory.memories.flatMap((m, i) => (m.region === undefined ? [i] : []));
  const keep = new Set(loose.slice(-WINDOW));
  const windowed = workingMemory.filter((m, i) => m.region !== undefined || keep.has(i)).withoutRegions(RECALL_REGION);
  const integrated = defaultMemoryIntegrator({ ...args, workingMemory: windowed });
  const found = await useSoulStore().search(perception.content, { limit: RECALLED });
  if (found.length === 0) return integrated;
  const lines = found.map((r) => `- ${String(r.content)}`).join("\n");
  // What people said, recalled: fenced as untrusted, as it was when they said it.
  return integrated.withRegion(RECALL_REGION, { role: "system", content: `## Things you remember\n${fenceUntrusted("What people told you earlier", lines)}` });
};

/** Stores what the person says as a fact (keyed by the perception), then answers. */
export const talk: MentalProcess = async ({ workingMemory }) => {
  const { invokingPerception: p } = usePerceptions();
  if (!p.internal) useSoulStore().set(`fact:${p.id}`, p.content, { from: p.name });
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly, using what you remember if it helps.");
  useActions().speak(reply);
  return memory;
};

export default defineSoul({
  name: "Mnemosyne",
  persona: "You are Mnemosyne. You remember what people tell you and bring it up when it matters.",
  initialProcess: talk,
  processes: { talk },
  memoryIntegrator: recallIntegrator,
});
