import { z } from "zod";
import { createCognitiveStep } from "../createCognitiveStep.ts";
import { indentNicely } from "../indentNicely.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

const BrainstormAnswer = z.object({
  newIdeas: z.array(z.string()).describe("The new brainstormed ideas."),
});

/** New ideas, as a list; the memory lists them one per line. */
export const brainstorm = createCognitiveStep(
  (description: string) => ({
    command: ({ soulName: name }: WorkingMemory): InputMemory => ({
      role: ChatMessageRoleEnum.System,
      name,
      content: indentNicely`
        ${name} is brainstorming new ideas.

        ## Idea Description
        ${description}

        Reply with the new ideas that ${name} brainstormed.
      `,
    }),
    schema: BrainstormAnswer,
    postProcess: (memory: WorkingMemory, response: z.output<typeof BrainstormAnswer>): [InputMemory, string[]] => {
      const ideas = response.newIdeas;
      return [
        {
          role: ChatMessageRoleEnum.Assistant,
          content: `${memory.soulName} brainstormed: ${ideas.join("\n")}`,
          metadata: { step: "brainstorm" },
        },
        ideas,
      ];
    },
  }),
  { name: "brainstorm" },
);
