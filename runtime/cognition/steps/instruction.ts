import { createCognitiveStep } from "../createCognitiveStep.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

/**
 * A raw instruction to the model, in the soul's name; the answer comes back as it is and is
 * appended as an assistant memory.
 */
export const instruction = createCognitiveStep(
  (instructions: string) => ({
    command: ({ soulName }: WorkingMemory): InputMemory => ({
      role: ChatMessageRoleEnum.System,
      name: soulName,
      content: instructions,
    }),
    format: { type: "text" },
  }),
  { name: "instruction" },
);
