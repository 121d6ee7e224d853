import { createCognitiveStep, type CognitiveStep } from "../createCognitiveStep.ts";
import { ChatMessageRoleEnum, type InputMemory } from "../Memory.ts";
import { stripEntityAndVerb, stripEntityAndVerbFromStream } from "../stripEntityAndVerb.ts";
import type { WorkingMemory } from "../WorkingMemory.ts";

export type VerbInstructions = string | { instructions: string; verb?: string };

export interface VerbStepDefinition {
  /** The step's name, also recorded in the appended memory's metadata. */
  name: string;
  /** The verb when the caller gives none. */
  defaultVerb: string;
  /** The system command for the soul called `name`. */
  command(name: string, verb: string, instructions: string): string;
}

/**
 * How a verb step's answer is kept in memory, the Open Souls way: `Soul verb: "text"`, with the
 * step and the verb in the metadata (and whatever else the caller adds, after them).
 */
export function verbMemory(soulName: string, step: string, verb: string, text: string, metadata: Record<string, unknown> = {}): InputMemory {
  return {
    role: ChatMessageRoleEnum.Assistant,
    content: `${soulName} ${verb}: "${text}"`,
    metadata: { step, verb, ...metadata },
  };
}

/**
 * A verb step (externalDialog, internalMonologue): the model answers as `Soul verb: "..."`,
 * the answer is appended in that form, and the caller gets it without the prefix and
 * quotes, streamed the same way.
 */
export function createVerbStep(definition: VerbStepDefinition): CognitiveStep<VerbInstructions, string> {
  return createCognitiveStep(
    (input: VerbInstructions) => {
      const instructions = typeof input === "string" ? input : input.instructions;
      const verb = (typeof input === "string" ? undefined : input.verb) ?? definition.defaultVerb;
      return {
        command: ({ soulName: name }: WorkingMemory): InputMemory => ({
          role: ChatMessageRoleEnum.System,
          name,
          content: definition.command(name, verb, instructions),
        }),
        format: { type: "text" },
        streamProcessor: stripEntityAndVerbFromStream,
        postProcess: (memory: WorkingMemory, response: string): [InputMemory, string] => {
          const stripped = stripEntityAndVerb(memory.soulName, verb, response);
          return [verbMemory(memory.soulName, definition.name, verb, stripped), stripped];
        },
      };
    },
    { name: definition.name },
  );
}
