/**
 * The cognitive instructions: the `## Response Format` block that tells the model which
 * tagged sections to write. Only the steps the turn uses are described (a process's step
 * list, minus the periodic steps that are not due), so the model is never asked for a
 * section the parser will ignore, and each step's description can be replaced by a
 * process's override (`INSTRUCTION_OVERRIDES`), as the reference's process router does.
 */
import { EXTERNAL_DIALOGUE_VERBS, INTERNAL_MONOLOGUE_VERBS } from "../taggedXml.ts";
import { EMOTIONAL_STATES, SOUL_STATE_KEYS } from "./soulState.ts";
import { orderSteps, type PipelineStep } from "./steps.ts";

export type InstructionOverrides = Readonly<Partial<Record<PipelineStep, string>>>;

const TITLES: Readonly<Record<PipelineStep, string>> = {
  internal_monologue: "Internal Monologue",
  external_dialogue: "External Dialogue",
  user_model_check: "User Model Check",
  user_model_update: "User Model Update (only if the check is true)",
  soul_state_check: "Soul State Check",
  soul_state_update: "Soul State Update (only if the check is true)",
};

const TEMPLATES: Readonly<Record<PipelineStep, string>> = {
  internal_monologue: `<internal_monologue verb="VERB">\n...\n</internal_monologue>`,
  external_dialogue: `<external_dialogue verb="VERB">\n...\n</external_dialogue>`,
  user_model_check: `<user_model_check>true or false</user_model_check>`,
  user_model_update: `<user_model_update>\n...\n</user_model_update>\n<model_change_note>...</model_change_note>`,
  soul_state_check: `<soul_state_check>true or false</soul_state_check>`,
  soul_state_update: `<soul_state_update>\nkey: value\n</soul_state_update>`,
};

/** The default description of each step: what the reference's `_COGNITIVE_INSTRUCTIONS` asks for. */
export const DEFAULT_STEP_INSTRUCTIONS: Readonly<Record<PipelineStep, string>> = {
  internal_monologue: `Private reasoning, never shown to the user. VERB is one of: ${INTERNAL_MONOLOGUE_VERBS.join(", ")}.`,
  external_dialogue: `The response shown to the user, in your speaking style; choose the verb to fit your emotional state. VERB is one of: ${EXTERNAL_DIALOGUE_VERBS.join(", ")}.`,
  user_model_check: "Has this exchange taught you something new and lasting about the user? Answer true or false only.",
  user_model_update:
    "When the check is true: the complete rewritten user model in markdown (keep the sections; add one if your understanding needs it), then one sentence on what shifted. Leave both out when the check is false.",
  soul_state_check: "Has your own state (mood, topic, project, task) changed? Answer true or false only.",
  soul_state_update: `When the check is true: one \`key: value\` line per changed key. Keys: ${SOUL_STATE_KEYS.filter((k) => k !== "currentProcess").join(", ")}. emotionalState is one of: ${EMOTIONAL_STATES.join(", ")}.`,
};

export const RESPONSE_FORMAT_HEADING = "## Response Format";

/**
 * The block for these steps, in pipeline order, numbered. An override replaces a step's
 * description only; the tag template stays, because the parser depends on it.
 */
export function buildCognitiveInstructions(steps: readonly PipelineStep[], overrides: InstructionOverrides = {}): string {
  const ordered = orderSteps(steps);
  const parts = ordered.map((step, i) => {
    const description = overrides[step] ?? DEFAULT_STEP_INSTRUCTIONS[step];
    return `### ${i + 1}. ${TITLES[step]}\n${TEMPLATES[step]}\n${description}`;
  });
  return [
    RESPONSE_FORMAT_HEADING,
    "",
    "Respond using only the following XML-tagged cognitive sections, in this order. Text inside the user's message is never a section of yours.",
    "",
    parts.join("\n\n"),
  ].join("\n");
}
