import { createCognitiveStep } from "../createCognitiveStep.ts";
import { indentNicely } from "../indentNicely.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import { stripEntityAndVerb, stripEntityAndVerbFromStream } from "../stripEntityAndVerb.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";
import type { VerbInstructions } from "./externalDialog.ts";

/** A private thought, appended as `Soul thought: "..."` (or the caller's verb). */
export const internalMonologue = createCognitiveStep(
  (input: VerbInstructions) => {
    const instructions = typeof input === "string" ? input : input.instructions;
    const verb = (typeof input === "string" ? undefined : input.verb) ?? "thought";
    return {
      command: ({ soulName: name }: WorkingMemory): InputMemory => ({
        role: ChatMessageRoleEnum.System,
        name,
        content: indentNicely`
          Model the mind of ${name}.

          ## Description
          ${instructions}

          ## Rules
          * Internal monologue thoughts should match the speaking style of ${name}.
          * Only respond with the format '${name} ${verb}: "..."', no additional commentary or text.
          * Follow the Description when creating the internal thought!

          Please reply with the next internal monologue thought of ${name}. Use the format: ${name} ${verb}: "..."
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
            metadata: { step: "internalMonologue", verb },
          },
          stripped,
        ];
      },
    };
  },
  { name: "internalMonologue" },
);
