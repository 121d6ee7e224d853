import { createCognitiveStep, type CognitiveStep } from "../createCognitiveStep.ts";
import { indentNicely } from "../indentNicely.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import { stripEntityAndVerb, stripEntityAndVerbFromStream } from "../stripEntityAndVerb.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

const step = createCognitiveStep(
  (extraInstructions: string | undefined) => ({
    command: ({ soulName: name }: WorkingMemory): InputMemory => ({
      role: ChatMessageRoleEnum.System,
      name,
      content: indentNicely`
        ${name} summarizes the conversation so far: what ${name} has learned so far, about the
        people in it and about what was said, keeping the details ${name} would want to remember.

        ## Extra Instructions
        ${extraInstructions ?? ""}

        Please reply with the summary in the voice of ${name}. Use the format: ${name} summarized: "..."
      `,
    }),
    format: { type: "text" },
    streamProcessor: stripEntityAndVerbFromStream,
    postProcess: (memory: WorkingMemory, response: string): [InputMemory, string] => {
      const stripped = stripEntityAndVerb(memory.soulName, "summarized", response);
      return [
        {
          role: ChatMessageRoleEnum.Assistant,
          content: `${memory.soulName} summarized: "${stripped}"`,
          metadata: { step: "summarize" },
        },
        stripped,
      ];
    },
  }),
  { name: "summarize" },
);

/**
 * A summary of what the soul has learned so far, for memory compression (typically stored
 * in a `summary` region). The extra instructions are optional, as in Open Souls.
 */
export const summarize = step as CognitiveStep<string | undefined, string> & {
  (memory: WorkingMemory): Promise<[WorkingMemory, string]>;
};
