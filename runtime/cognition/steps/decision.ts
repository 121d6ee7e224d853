import { z } from "zod";
import { createCognitiveStep } from "../createCognitiveStep.ts";
import { indentNicely } from "../indentNicely.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

/** An enum object (a TypeScript `enum` or `{ A: "a" }`), as Open Souls' `z.EnumLike`. */
export type EnumLike = Readonly<Record<string, string | number>>;

export interface DecisionInput {
  description: string;
  choices: readonly string[] | EnumLike;
  verb?: string;
}

/** The values of a choice list; a numeric TypeScript enum's reverse mappings are left out. */
export function choiceValues(choices: readonly string[] | EnumLike): string[] {
  if (Array.isArray(choices)) return [...(choices as readonly string[])];
  const record = choices as EnumLike;
  // A numeric TypeScript enum also maps each number back to its key: `{ A: 0, "0": "A" }`.
  const isReverseMapping = (key: string, value: string | number) =>
    typeof value === "string" && /^-?\d+(\.\d+)?$/.test(key) && record[value] === Number(key);
  return Object.entries(record)
    .filter(([key, value]) => !isReverseMapping(key, value))
    .map(([, value]) => String(value));
}

/**
 * Chooses one of the choices. The schema is an enum of them, so the model is told exactly
 * what it may answer; a near miss (other case, quotes, `Soul decided: x`) still counts.
 */
export const decision = createCognitiveStep(
  ({ description, choices, verb = "decided" }: DecisionInput) => {
    const values = [...new Set(choiceValues(choices))];
    if (values.length === 0) throw new Error("decision: choices must not be empty");
    const canonical = (raw: unknown): unknown => {
      if (typeof raw !== "string" && typeof raw !== "number") return raw;
      const text = String(raw);
      if (values.includes(text)) return text;
      const loose = (s: string) => s.trim().replace(/^["'`*]+|["'`*.]+$/g, "").trim().toLowerCase();
      // Also accept `Soul decided: choice`.
      const candidates = [loose(text), loose(text.replace(/^[^:\n]{0,80}:/, ""))];
      return values.find((v) => candidates.includes(loose(v))) ?? text;
    };
    const schema = z.object({
      decision: z
        .preprocess(canonical, z.enum(values as [string, ...string[]]))
        .describe(`The decision made by the entity: one of the options.`),
    });
    return {
      command: ({ soulName: name }: WorkingMemory): InputMemory => ({
        role: ChatMessageRoleEnum.System,
        name,
        content: indentNicely`
          ${name} is deciding between the following options:
          ${values.map((c) => `* ${c}`).join("\n")}

          ## Description
          ${description}

          ## Rules
          * ${name} must decide on one of the options. Return ${name}'s decision.
        `,
      }),
      schema,
      postProcess: (memory: WorkingMemory, response: z.output<typeof schema>): [InputMemory, string] => {
        const choice = response.decision;
        return [
          {
            role: ChatMessageRoleEnum.Assistant,
            content: `${memory.soulName} ${verb}: "${choice}"`,
            metadata: { step: "decision", verb, choice },
          },
          choice,
        ];
      },
    };
  },
  { name: "decision" },
);
