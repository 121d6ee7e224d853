/**
 * Parsing one pipeline answer: the reference's `parse_response`, on top of the tagged-XML
 * rules in ../taggedXml.ts (known tags only, outside fences, top level only; first of a
 * duplicated tag wins; an unclosed tag runs to the next known tag).
 *
 * What comes out, and the fallbacks:
 * - `dialogue` is what is spoken: the `external_dialogue` section. Without one, the answer
 *   with every section and tag removed (so a monologue, closed or not, never reaches the
 *   user). An answer that wrapped all its sections in one code fence is unwrapped first.
 * - `monologue` is kept for memory and never spoken.
 * - a check counts only when its step was asked for and it reads true/false; an update
 *   counts only after a check that read true. Sections nobody asked for are ignored.
 * - `soulStateUpdate` is the raw `key: value` lines; which keys are kept is
 *   applySoulStateUpdate's business (only the defaults' keys, a valid emotionalState).
 * Every fallback taken is named in `issues`, so a model that drifts from the format shows.
 */
import { COGNITIVE_TAGS, parseKeyValueLines, parseTaggedAnswer, stripTags, type TaggedSection } from "../taggedXml.ts";
import type { PipelineStep } from "./steps.ts";

export interface PipelineVerbs {
  monologue?: string;
  dialogue?: string;
}

export interface ParsedPipelineAnswer {
  /** What the soul says. */
  dialogue: string;
  /** False when the answer had no `external_dialogue` and the fallback text is spoken. */
  dialogueTagged: boolean;
  monologue?: string;
  verbs: PipelineVerbs;
  userModelCheck?: boolean;
  userModelUpdate?: string;
  changeNote?: string;
  soulStateCheck?: boolean;
  soulStateUpdate?: Record<string, string>;
  /** The fallbacks taken, in words. Empty for a well-formed answer. */
  issues: string[];
}

export interface ParseOptions {
  /** The spoken text is cut to this many characters (default: no cut). */
  maxDialogueChars?: number;
  /**
   * Check verdicts already known from an earlier call (split mode asks for an update in a
   * call of its own, after the check's call said true).
   */
  knownChecks?: { user_model_check?: boolean; soul_state_check?: boolean };
  /** False for an answer that was never meant to hold the dialogue (a split-mode step). */
  expectDialogue?: boolean;
}

const VERB_MAX_CHARS = 40;
const ANY_TAG = /<\s*\/?\s*[A-Za-z_][\w.:-]*(?:\s[^<>]*)?\/?\s*>/g;

function verbOf(section: TaggedSection | undefined): string | undefined {
  const verb = section?.attributes["verb"]?.replace(/\s+/g, " ").trim();
  return verb ? verb.slice(0, VERB_MAX_CHARS) : undefined;
}

function booleanOf(content: string): boolean | undefined {
  const text = content.trim().toLowerCase();
  if (/^(true|yes)\b/.test(text)) return true;
  if (/^(false|no)\b/.test(text)) return false;
  return undefined;
}

function cut(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** The top-level sections, unwrapping an answer that put everything in one fenced block. */
function sectionsOf(raw: string, issues: string[]): { text: string; sections: TaggedSection[] } {
  const sections = parseTaggedAnswer(raw, { knownTags: COGNITIVE_TAGS });
  if (sections.length > 0) return { text: raw, sections };
  const whole = /^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n?\1\s*$/.exec(raw.trim());
  if (whole) {
    const inner = whole[2];
    const unwrapped = parseTaggedAnswer(inner, { knownTags: COGNITIVE_TAGS });
    if (unwrapped.length > 0) {
      issues.push("the sections were wrapped in a code fence");
      return { text: inner, sections: unwrapped };
    }
  }
  return { text: raw, sections };
}

export function parsePipelineAnswer(raw: string, steps: readonly PipelineStep[], options: ParseOptions = {}): ParsedPipelineAnswer {
  const issues: string[] = [];
  const asked = new Set(steps);
  const { text, sections } = sectionsOf(raw, issues);
  const first = (name: string) => sections.find((s) => s.name === name);
  const counts = new Map<string, number>();
  for (const s of sections) {
    counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
    if (!s.closed) issues.push(`<${s.name}> was not closed`);
  }
  for (const [name, n] of counts) if (n > 1) issues.push(`<${name}> appeared ${n} times; the first was used`);

  const monologueSection = first("internal_monologue");
  const dialogueSection = first("external_dialogue");
  const verbs: PipelineVerbs = {};
  const monologueVerb = verbOf(monologueSection);
  const dialogueVerb = verbOf(dialogueSection);
  if (monologueVerb) verbs.monologue = monologueVerb;
  if (dialogueVerb) verbs.dialogue = dialogueVerb;

  let dialogue: string;
  if (dialogueSection) {
    dialogue = dialogueSection.content;
  } else {
    if (options.expectDialogue !== false) issues.push("no <external_dialogue>: the answer without its tags is spoken");
    dialogue = stripTags(text, { knownTags: COGNITIVE_TAGS }).replace(ANY_TAG, "").replace(/\n{3,}/g, "\n\n").trim();
  }
  const result: ParsedPipelineAnswer = {
    dialogue: cut(dialogue, options.maxDialogueChars),
    dialogueTagged: dialogueSection !== undefined,
    verbs,
    issues,
  };
  if (monologueSection) result.monologue = monologueSection.content;

  const check = (step: "user_model_check" | "soul_state_check"): boolean | undefined => {
    const known = options.knownChecks?.[step];
    if (known !== undefined) return known;
    const section = first(step);
    if (!asked.has(step)) {
      if (section) issues.push(`<${step}> was not asked for and is ignored`);
      return undefined;
    }
    if (!section) {
      issues.push(`<${step}> is missing`);
      return undefined;
    }
    const value = booleanOf(section.content);
    if (value === undefined) issues.push(`<${step}> is neither true nor false`);
    return value;
  };

  const userModelCheck = check("user_model_check");
  if (userModelCheck !== undefined) result.userModelCheck = userModelCheck;
  const modelSection = first("user_model_update");
  if (userModelCheck === true && asked.has("user_model_update")) {
    if (modelSection?.content) result.userModelUpdate = modelSection.content;
    else issues.push("the user model check was true but <user_model_update> is missing or empty");
    const note = first("model_change_note")?.content.replace(/\s+/g, " ").trim();
    if (note) result.changeNote = note;
  } else if (modelSection) {
    issues.push("<user_model_update> without a true check is ignored");
  }

  const soulStateCheck = check("soul_state_check");
  if (soulStateCheck !== undefined) result.soulStateCheck = soulStateCheck;
  const stateSection = first("soul_state_update");
  if (soulStateCheck === true && asked.has("soul_state_update")) {
    if (stateSection) result.soulStateUpdate = parseKeyValueLines(stateSection.content);
    else issues.push("the soul state check was true but <soul_state_update> is missing");
  } else if (stateSection) {
    issues.push("<soul_state_update> without a true check is ignored");
  }
  return result;
}
