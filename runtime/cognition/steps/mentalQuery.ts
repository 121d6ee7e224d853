import { z } from "zod";
import { createCognitiveStep } from "../createCognitiveStep.ts";
import { indentNicely } from "../indentNicely.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

const MentalQueryAnswer = z.object({
  isStatementTrue: z.boolean().describe("Is the statement true or false?"),
});

/**
 * How a verdict is kept in memory, the Open Souls way: the statement and the result in the
 * metadata (and whatever else the caller adds, after them), so gates need not parse prose.
 */
export function queryMemory(soulName: string, statement: string, result: boolean, metadata: Record<string, unknown> = {}): InputMemory {
  return {
    role: ChatMessageRoleEnum.Assistant,
    content: `${soulName} evaluated: "${statement}" and decided that the statement is ${result ? "true" : "false"}`,
    metadata: { step: "mentalQuery", statement, result, ...metadata },
  };
}

/**
 * The soul judges a statement true or false. The memory records the verdict, with the result
 * in `metadata.result` so gates (Samantha-Dreams) can read it without parsing prose.
 */
export const mentalQuery = createCognitiveStep(
  (statement: string) => ({
    command: ({ soulName: name }: WorkingMemory): InputMemory => ({
      role: ChatMessageRoleEnum.System,
      name,
      content: indentNicely`
        ${name} reasons about the veracity of the following statement.
        > ${statement}

        Please reply with if ${name} believes the statement is true or false.
      `,
    }),
    schema: MentalQueryAnswer,
    postProcess: (memory: WorkingMemory, response: z.output<typeof MentalQueryAnswer>): [InputMemory, boolean] => {
      const result = response.isStatementTrue;
      return [queryMemory(memory.soulName, statement, result), result];
    },
  }),
  { name: "mentalQuery" },
);
