import { z } from "zod";
import { createCognitiveStep } from "../../runtime/cognition/index.ts";
import type { WorkingMemory } from "../../runtime/cognition/index.ts";
import { formatDecisionLog } from "./decisionLog.ts";
import { describeError } from "./handlerResult.ts";
import { DONE_ACTION, type DecisionLogEntry } from "./types.ts";

/** What the choice prompt is built from. */
export interface ChoicePrompt {
  goal: string;
  playbook: string;
  actions: readonly { name: string; description: string }[];
  decisions: readonly DecisionLogEntry[];
}

/** The model's answer, as the schema admits it (names not yet checked against the actions). */
export interface ActionChoice {
  actions: string[];
  reasoning: string;
}

/** The answer after checking, as the machine routes on it. */
export type ChoiceResult =
  | { kind: "done"; actions: string[]; reasoning: string }
  | { kind: "act"; actions: string[]; reasoning: string }
  | { kind: "rejected"; actions: string[]; reasoning: string; error: string }
  | { kind: "failed"; error: string };

/**
 * The JSON schema the model sees lists the action names as an enum (models and the offline
 * model answer inside it), but validation accepts any name. On purpose: an unknown name is
 * not a format error for `createCognitiveStep` to retry silently; the ISM logs it in the
 * decision log and the turn's log, and asks again once with the rejection in view.
 */
export function choiceSchema(actionNames: readonly string[]): z.ZodType<ActionChoice> {
  const name = z
    .string()
    .min(1)
    .meta({ enum: [...actionNames, DONE_ACTION] });
  return z.object({
    actions: z
      .array(name)
      .min(1)
      .describe(`One or more action names to take now, in order; or ["${DONE_ACTION}"] when the goal is satisfied.`),
    reasoning: z.string().describe("Why these actions, in a sentence or two."),
  });
}

export function buildChoicePrompt({ goal, playbook, actions, decisions }: ChoicePrompt): string {
  const actionList = actions.map((a) => `- **${a.name}**: ${a.description}`).join("\n");
  return [
    "You are deciding what to do next, step by step, toward a goal.",
    "",
    "## Goal",
    goal,
    "",
    "## Playbook",
    playbook,
    "",
    "## Available Actions",
    actionList,
    `- **${DONE_ACTION}**: the goal is satisfied; stop here.`,
    "",
    "## Decision Log",
    formatDecisionLog(decisions),
    "",
    "Choose one or more actions to take now; they run in the order you give.",
    "Do not repeat an action whose result is already in the decision log unless something new makes it necessary.",
    "Use only the action names listed above.",
    `If the goal is satisfied, answer with {"actions": ["${DONE_ACTION}"], "reasoning": "goal achieved because ..."}.`,
    'Otherwise answer with {"actions": ["ActionName1", "ActionName2"], "reasoning": "why"}.',
  ].join("\n");
}

/** The action choice, a schema step: the model must answer `{ actions, reasoning }` as JSON. */
export const chooseAction = createCognitiveStep<ChoicePrompt, ActionChoice, ActionChoice>(
  (prompt) => ({
    command: buildChoicePrompt(prompt),
    schema: choiceSchema(prompt.actions.map((a) => a.name)),
    postProcess: (_memory, choice) => [
      { role: "assistant", content: `Chose [${choice.actions.join(", ")}] — ${choice.reasoning}` },
      choice,
    ],
  }),
  { name: "chooseAction" },
);

/**
 * Checks a choice against the actions. Names match ignoring case and surrounding space
 * (models drift on both) and come back spelled as the blueprint spells them. `DONE` anywhere
 * in the list ends the ISM, as in the reference loop: the model has said the goal is met.
 */
export function checkChoice(choice: ActionChoice, actionNames: readonly string[]): ChoiceResult {
  const canonical = new Map(actionNames.map((n) => [n.trim().toLowerCase(), n] as const));
  const reasoning = choice.reasoning;
  if (choice.actions.some((a) => a.trim().toUpperCase() === DONE_ACTION)) {
    return { kind: "done", actions: choice.actions, reasoning };
  }
  const resolved = choice.actions.map((a) => canonical.get(a.trim().toLowerCase()));
  const unknown = choice.actions.filter((_, i) => resolved[i] === undefined);
  if (unknown.length) {
    const error =
      `unknown action${unknown.length > 1 ? "s" : ""} ${unknown.map((u) => JSON.stringify(u)).join(", ")}; ` +
      `choose only from ${[...actionNames, DONE_ACTION].join(", ")}`;
    return { kind: "rejected", actions: choice.actions, reasoning, error };
  }
  return { kind: "act", actions: resolved.filter((n): n is string => n !== undefined), reasoning };
}

/**
 * Runs the choice step and never throws: a model that ignored the format twice (the step's own
 * retry is the retry for unparseable answers), a provider failure or an abort all become a
 * `failed` choice the machine records.
 */
export async function chooseNextActions(
  memory: WorkingMemory,
  prompt: ChoicePrompt,
  options: { model?: string; signal?: AbortSignal } = {},
): Promise<ChoiceResult> {
  try {
    const stepOptions: { model?: string; signal?: AbortSignal } = {};
    if (options.model !== undefined) stepOptions.model = options.model;
    if (options.signal !== undefined) stepOptions.signal = options.signal;
    const [, choice] = await chooseAction(memory, prompt, stepOptions);
    return checkChoice(
      choice,
      prompt.actions.map((a) => a.name),
    );
  } catch (error) {
    return { kind: "failed", error: describeError(error) };
  }
}
