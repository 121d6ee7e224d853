/**
 * A single-call pipeline answer as a model would write it: the tagged sections in pipeline
 * order. Tests script what "the model said" with it instead of hand-writing the tags.
 */
export interface AnswerParts {
  monologue?: string;
  monologueVerb?: string;
  dialogue: string;
  dialogueVerb?: string;
  userModelCheck?: boolean;
  /** The rewritten user model (markdown); written only with a change note. */
  userModel?: string;
  changeNote?: string;
  soulStateCheck?: boolean;
  /** `key: value` lines; a value of "" writes an empty `key:` line. */
  soulState?: Record<string, string>;
}

export function pipelineAnswer(p: AnswerParts): string {
  const parts: string[] = [];
  if (p.monologue !== undefined) {
    parts.push(`<internal_monologue verb="${p.monologueVerb ?? "pondered"}">\n${p.monologue}\n</internal_monologue>`);
  }
  parts.push(`<external_dialogue verb="${p.dialogueVerb ?? "replied"}">\n${p.dialogue}\n</external_dialogue>`);
  if (p.userModelCheck !== undefined) parts.push(`<user_model_check>${p.userModelCheck}</user_model_check>`);
  if (p.userModel !== undefined) {
    parts.push(`<user_model_update>\n${p.userModel}\n</user_model_update>`);
    parts.push(`<model_change_note>${p.changeNote ?? "Something shifted."}</model_change_note>`);
  }
  if (p.soulStateCheck !== undefined) parts.push(`<soul_state_check>${p.soulStateCheck}</soul_state_check>`);
  if (p.soulState !== undefined) {
    const lines = Object.entries(p.soulState).map(([k, v]) => (v === "" ? `${k}:` : `${k}: ${v}`));
    parts.push(`<soul_state_update>\n${lines.join("\n")}\n</soul_state_update>`);
  }
  return parts.join("\n");
}

/** A user model in the seven-section blueprint, with one line that identifies the version. */
export function userModelOf(name: string, marker: string): string {
  return [
    `# ${name}`,
    "",
    "## Persona",
    marker,
    "",
    "## Speaking Style",
    "Terse.",
    "",
    "## Conversational Context",
    "Restoring hand planes.",
    "",
    "## Worldview",
    "Things should be made to last.",
    "",
    "## Interests & Domains",
    "Woodworking, old tools.",
    "",
    "## Working Patterns",
    "Works in the evenings.",
    "",
    "## Most Potent Memories",
    "Asked about bevel angles.",
  ].join("\n");
}
