import { createCognitiveStep } from "../createCognitiveStep.ts";
import { indentNicely } from "../indentNicely.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import { stripEntityAndVerb, stripEntityAndVerbFromStream } from "../stripEntityAndVerb.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

export type VerbInstructions = string | { instructions: string; verb?: string };

/**
 * What the soul says out loud. The answer is appended as `Soul said: "..."` (the verb is
 * the caller's) and returned without that prefix and quotes, streamed the same way.
 */
export const externalDialog = createCognitiveStep(
  (input: VerbInstructions) => {
    const instructions = typeof input === "string" ? input : input.instructions;
    const verb = (typeof input === "string" ? undefined : input.verb) ?? "said";
    return {
      command: ({ soulName: name }: WorkingMemory): InputMemory => ({
        role: ChatMessageRoleEnum.System,
        name,
        content: indentNicely`
          Model the mind of ${name}.

          ## Instructions
          * DO NOT include actions (for example, do NOT add non-verbal items like *John Smiles* or *John Nods*, etc).
          * DO NOT include internal thoughts (for example, do NOT respond with John thought: "...").
          * If necessary, use all CAPS to emphasize certain words.

          ${instructions}

          Please reply with the next utterance from ${name}. Use the format: ${name} ${verb}: "..."
        `,
      }),
      format: { type: "text" },
      streamProcessor: stripEntityAndVerbFromStream,
      postProcess: (memory: WorkingMemory, response: string): [InputMemory, string] => {
        const stripped = stripEntityAndVerb(memory.soulName, verb, response);
        return [
          {
            role: ChatMessageRoleEnum.Assistant,
            content: `${memory.soulName} ${verb}: "${stripped}"`,
            metadata: { step: "externalDialog", verb },
          },
          stripped,
        ];
      },
    };
  },
  { name: "externalDialog" },
);
