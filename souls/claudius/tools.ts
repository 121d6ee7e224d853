/**
 * Claudius's tools: a clock (what day and hour it is, which a model cannot know) and a
 * notebook kept in LMDB, one per soul, that its Research action consults (toolResearch.ts).
 * A node gives them to every soul that runs the builtin `claudius` blueprint, the notebook in
 * the node's store (runtime/node/soulFolderTools.ts); a host that makes the soul itself gives
 * them as services (`createToolRegistry(claudiusTools(store))`).
 */
import { z } from "zod";
import { defineTool, type Tool } from "../../actors/tool/index.ts";
import type { Store } from "../../runtime/store/index.ts";

export const clockTool: Tool = defineTool({
  name: "clock",
  description: "The current date and time (ISO 8601, UTC) and the weekday.",
  input: z.object({}),
  idempotent: true,
  timeoutMs: 1_000,
  run: () => {
    const now = new Date();
    return { iso: now.toISOString(), weekday: now.toLocaleDateString("en-GB", { weekday: "long", timeZone: "UTC" }) };
  },
});

export const NOTES_NAMESPACE = "notes";
const NOTE_MAX_CHARS = 2_000;

export interface Note {
  text: string;
  ts: number;
}

const notesInput = z.discriminatedUnion("action", [
  z.object({ action: z.literal("add"), text: z.string().min(1).max(NOTE_MAX_CHARS) }),
  z.object({ action: z.literal("search"), query: z.string().max(500).default(""), limit: z.number().int().min(1).max(20).default(5) }),
]);

/**
 * The notebook, in `store` under each calling soul's own keyspace (namespace `notes`). A note
 * is keyed by the call's id, so a call run again after a crash writes the same note again,
 * not a second one: that makes the tool idempotent, and it says so.
 */
export function createNotesTool(store: Pick<Store, "kv">): Tool {
  return defineTool({
    name: "notes",
    description: "Claudius's notebook: add a note ({action:'add', text}) or search the notes ({action:'search', query, limit}).",
    input: notesInput,
    idempotent: true,
    timeoutMs: 2_000,
    run: async (input, ctx) => {
      const notes = store.kv<Note>(ctx.soulId, NOTES_NAMESPACE);
      if (input.action === "add") {
        await notes.put([ctx.callId], { text: input.text, ts: Date.now() });
        return { added: true };
      }
      const words = input.query.toLowerCase().split(/\W+/).filter((w) => w.length > 2);
      const matching = notes
        .range()
        .map((e) => e.value)
        .filter((n) => words.length === 0 || words.some((w) => n.text.toLowerCase().includes(w)))
        .sort((a, b) => b.ts - a.ts);
      return { notes: matching.slice(0, input.limit).map((n) => n.text) };
    },
  });
}

/** Both tools, the notebook in `store`. */
export function claudiusTools(store: Pick<Store, "kv">): Tool[] {
  return [clockTool, createNotesTool(store)];
}
