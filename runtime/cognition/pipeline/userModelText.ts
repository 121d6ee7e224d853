/**
 * The text shape of a user model (Claudius's seven sections), which the prompt shows and the
 * model rewrites. It lives in cognition because prompts are built from it; the store only
 * keeps its versions (runtime/store/userModels.ts), and cognition never imports the store.
 */
/** The blueprint: a starting shape, not a cage (a model may grow sections of its own). */
export const USER_MODEL_SECTIONS = [
  "Persona",
  "Speaking Style",
  "Conversational Context",
  "Worldview",
  "Interests & Domains",
  "Working Patterns",
  "Most Potent Memories",
] as const;

/** The model of someone the soul has just met: the seven sections, nothing known yet. */
export function blankUserModel(name: string): string {
  const title = name.replace(/\s+/g, " ").trim() || "Unknown user";
  return [`# ${title}`, ...USER_MODEL_SECTIONS.flatMap((s) => ["", `## ${s}`, "Nothing known yet."])].join("\n");
}
